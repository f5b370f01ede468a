import { describe, expect, it } from "vitest";
import type { LlamaContext, Token } from "node-llama-cpp";
import { LlamaEmbedder } from "../../../engine/runtime/LlamaEmbedder.js";
import { releaseThreadsPromptly } from "../../../engine/runtime/releaseThreadsPromptly.js";
import { useTinyModel } from "../../support/useTinyModel.js";

// node-llama-cpp frees a context's claim on the llama's threads a timer after its last decode; a
// context that decodes in that same turn of the event loop gets half the threads (and, through
// flash attention's split of the KV among threads, other sums). Role contexts free it at once.

/** Whether the context holds a claim on the llama's threads (node-llama-cpp's private member). */
const holdsClaim = (context: LlamaContext): boolean =>
    (context as unknown as { _threadSplitterConsumer?: object })._threadSplitterConsumer !== undefined;

describe("a context's claim on the llama's threads", () => {
    const tiny = useTinyModel(2);

    async function context(prompt: boolean): Promise<LlamaContext> {
        const created = await tiny.model.createContext({ contextSize: 256, sequences: 1, flashAttention: true, threads: 2 });
        tiny.track(created);
        if (prompt) {
            releaseThreadsPromptly(created);
        }
        return created;
    }

    it("is given up once the last decode ends, not a timer later as node-llama-cpp's own", async () => {
        const tokens = tiny.model.tokenize("A claim on threads outlives its decode by a timer.") as Token[];
        const own = await context(false);
        await own.getSequence().evaluateWithoutGeneratingNewTokens(tokens);
        expect(holdsClaim(own), "node-llama-cpp's own: still held right after the decode").toBe(true);

        const prompt = await context(true);
        const sequence = prompt.getSequence();
        await sequence.evaluateWithoutGeneratingNewTokens(tokens);
        expect(holdsClaim(prompt)).toBe(false);
        // and taken again by the next decode, while it runs
        const running = sequence.evaluateWithoutGeneratingNewTokens(tiny.model.tokenize(" More tokens.") as Token[]);
        await new Promise((resolve) => setImmediate(resolve));
        expect(holdsClaim(prompt), "held while a decode runs").toBe(true);
        await running;
        expect(holdsClaim(prompt)).toBe(false);
    });

    it("is given up by the embedder's context too: a prompt evaluated right after an embedding gets every thread", async () => {
        const embedder = new LlamaEmbedder(tiny.model, 256, 2);
        try {
            const prompt = await context(true);
            await embedder.embed(["A retrieval embeds the question, then the turn is prefilled."]);
            await prompt.getSequence().evaluateWithoutGeneratingNewTokens(tiny.model.tokenize("The turn's prompt, at once.") as Token[]);
            // the threads the prompt's decode was given, of the llama's 2 (node-llama-cpp's own: 1, the embedder's claim still held)
            expect(prompt.currentThreads).toBe(2);
        } finally {
            await embedder.dispose();
        }
    });
});
