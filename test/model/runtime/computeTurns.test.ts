import { describe, expect, it } from "vitest";
import type { LlamaContext, Token } from "node-llama-cpp";
import { ComputeTurns } from "../../../engine/runtime/ComputeTurns.js";
import { releaseThreadsPromptly } from "../../../engine/runtime/releaseThreadsPromptly.js";
import { takeComputeTurns } from "../../../engine/runtime/takeComputeTurns.js";
import { useTinyModel } from "../../support/useTinyModel.js";

// Two contexts of one model that decode at the same moment (split mode's prefill and decode): by
// node-llama-cpp's own thread splitting each computes beside the other on half the threads; in
// compute turns one graph runs at a time, with every thread.

const THREADS = 2;

/** What the native decodes of some contexts did: the most that ran at once, and each one's threads. */
interface NativeDecodes {
    maxAtOnce: number;
    readonly threads: number[];
}

/** Watches the native decodes of `context` (node-llama-cpp's private `_ctx`, 3.21) below anything wrapped later. */
function watchNativeDecodes(context: LlamaContext, seen: NativeDecodes, running: { count: number }): void {
    const native = (context as unknown as { _ctx: { decodeBatch(): Promise<void>; getThreads(): number } })._ctx;
    const decodeBatch = native.decodeBatch.bind(native);
    Object.defineProperty(native, "decodeBatch", {
        configurable: true,
        value: async () => {
            running.count++;
            seen.maxAtOnce = Math.max(seen.maxAtOnce, running.count);
            seen.threads.push(native.getThreads());
            try {
                await decodeBatch();
            } finally {
                running.count--;
            }
        }
    });
}

describe("compute turns", () => {
    const tiny = useTinyModel(THREADS);

    /** Two contexts decoding at once: one a long prompt in 64-token batches, the other a token at a time. */
    async function decodeSideBySide(turns: ComputeTurns | undefined): Promise<NativeDecodes> {
        const seen: NativeDecodes = { maxAtOnce: 0, threads: [] };
        const running = { count: 0 };
        const made: LlamaContext[] = [];
        for (const batchSize of [64, 8]) {
            const context = await tiny.model.createContext({
                contextSize: 512,
                sequences: 1,
                batchSize,
                flashAttention: true,
                threads: THREADS
            });
            tiny.track(context);
            made.push(context);
            releaseThreadsPromptly(context);
            watchNativeDecodes(context, seen, running);
            if (turns !== undefined) {
                expect(takeComputeTurns(context, turns)).toBe(true);
            }
        }
        const [prompt, stream] = made.map((context) => context.getSequence());
        const long = tiny.model.tokenize("The prompt prefills beside the stream, chunk by chunk. ".repeat(30)).slice(0, 400) as Token[];
        const short = tiny.model.tokenize("A stream steps.") as Token[];
        const streaming = (async () => {
            await stream!.evaluateWithoutGeneratingNewTokens(short);
            for (let i = 0; i < 24; i++) {
                await stream!.evaluateWithoutGeneratingNewTokens([short[i % short.length]!]);
            }
        })();
        await Promise.all([prompt!.evaluateWithoutGeneratingNewTokens(long), streaming]);
        return seen;
    }

    it("node-llama-cpp's own splitting, for comparison: the two contexts compute at once, on half the threads each", async () => {
        const seen = await decodeSideBySide(undefined);
        expect(seen.maxAtOnce).toBe(2);
        expect(Math.min(...seen.threads)).toBe(THREADS / 2);
    });

    it("computes one graph at a time, each with every thread, the two contexts taking turns", async () => {
        const turns = new ComputeTurns();
        const seen = await decodeSideBySide(turns);
        expect(seen.maxAtOnce, "graphs computing at once").toBe(1);
        expect(new Set(seen.threads), "threads of every graph").toEqual(new Set([THREADS]));
        expect(turns.numTurns).toBe(seen.threads.length);
        expect(turns.numWaited, "the contexts took turns").toBeGreaterThan(0);
    });
});
