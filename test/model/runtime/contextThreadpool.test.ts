import { describe, expect, it } from "vitest";
import { attachThreadpool } from "../../../engine/runtime/addonPatch/contextThreadpool.js";
import { LlamaRoleContext } from "../../../engine/runtime/LlamaRoleContext.js";
import { MemoryStateExchange } from "../../../engine/runtime/MemoryStateExchange.js";
import { useTinyModel } from "../../support/useTinyModel.js";
import { greedyTokens } from "../../support/greedyTokens.js";

// The patched addon's own ggml thread pool per context (engine/runtime/addonPatch/AddonContextThreadpool.cpp),
// in the local build `npm run build-llama` makes (the model tests' global setup makes one): attached
// for the context's life, computing exactly what ggml's pool per graph computes.

const PROMPT = "A context with a thread pool of its own decodes the very tokens of one whose pool is made per graph.";

describe("a context's own ggml thread pool in Kvault's patched local build", () => {
    const tiny = useTinyModel(2);

    async function context(threadpoolPoll: number | undefined): Promise<LlamaRoleContext> {
        const created = await LlamaRoleContext.create(
            tiny.model,
            { role: "decode", contextSize: 256, numSequences: 1, flashAttention: true, threads: 2, threadpoolPoll },
            new MemoryStateExchange()
        );
        tiny.track(created);
        return created;
    }

    it("is attached with the context's threads and the poll asked for, and only when asked", async () => {
        expect(tiny.runtime.binary, "npm run build-llama's build (the model tests' global setup makes it)").toEqual({
            kind: "localBuild",
            flavor: "native"
        });
        expect((await context(50)).threadpool).toEqual({ numThreads: 2, poll: 50 });
        expect((await context(0)).threadpool).toEqual({ numThreads: 2, poll: 0 });
        expect((await context(undefined)).threadpool).toBeUndefined();
    });

    it("decodes greedily the same tokens as ggml's pool per graph, polling or sleeping, and keeps doing so when replaced", async () => {
        const tokens = tiny.model.tokenize(PROMPT);
        const perGraph = await context(undefined);
        const expected = await greedyTokens(perGraph.acquireSequence()!, tokens, 24);
        expect(expected.length).toBe(24);
        for (const poll of [0, 50, 100]) {
            const pooled = await context(poll);
            expect(await greedyTokens(pooled.acquireSequence()!, tokens, 24), `poll ${poll}`).toEqual(expected);
        }
        // a second pool replaces the first (which is freed) between decodes, on the context's thread
        const replaced = await context(50);
        expect(await attachThreadpool(replaced.context, 0)).toEqual({ numThreads: 2, poll: 0 });
        expect(await greedyTokens(replaced.acquireSequence()!, tokens, 24)).toEqual(expected);
    });

    it("refuses a poll level outside 0–100 with the range, and a disposed context frees its pool once", async () => {
        const pooled = await context(50);
        await expect(attachThreadpool(pooled.context, 101)).rejects.toThrow(/poll is a level from 0 to 100, got 101/);
        await expect(attachThreadpool(pooled.context, -1)).rejects.toThrow(/poll is a level from 0 to 100/);
        await pooled.dispose();
        await pooled.dispose(); // idempotent: the pool is freed once, after llama_free
        await expect(attachThreadpool(pooled.context, 50)).rejects.toThrow(/disposed/);
    });
});
