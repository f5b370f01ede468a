import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bytesPerToken } from "../../../engine/codec/KvLayout.js";
import type { KvEngine, KvEngineHooks } from "../../../engine/KvEngine.js";
import { OFF_THREAD_MIN_BYTES } from "../../../engine/pages/PageHasher.js";
import type { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { startTestRuntime } from "../../support/testRuntime.js";
import { expectEngineClean, freshWorkspace, promptOf, startTinyEngine } from "../../support/engineFixtures.js";

// A long prompt's handoff in pages big enough that their seal and verify are hashed off the engine's
// thread (PagePool.sealPages / verifyPages, and beginSeal as each page of a scatter is written): decode still
// loads exactly what prefill wrote, and a byte flipped after the seal is still refused before
// anything is decoded.

const MAX_TOKENS = 6;
const NUM_PROMPT_TOKENS = 2600;
const PAGE_TOKENS = 512;
const WINDOW = 3072;
const config = {
    window: WINDOW,
    prefillContextSize: WINDOW,
    decodeContextSize: WINDOW,
    numDecodeSequences: 1,
    pageTokens: PAGE_TOKENS,
    numPages: 2 * (WINDOW / PAGE_TOKENS)
};

describe("a handoff whose pages are hashed off the engine's thread", () => {
    let runtime: LlamaRuntime;
    let engine: KvEngine;
    let reference: readonly number[];
    const hooks: KvEngineHooks = {};

    beforeAll(async () => {
        runtime = await startTestRuntime();
        engine = await startTinyEngine(runtime, config, hooks);
        const unified = await startTinyEngine(runtime, { ...config, mode: "unified" });
        reference = (
            await unified.generate({
                workspace: freshWorkspace(),
                promptTokens: promptOf(unified, NUM_PROMPT_TOKENS),
                maxTokens: MAX_TOKENS
            })
        ).tokens;
        await unified.dispose();
    });
    afterAll(async () => {
        await engine?.dispose();
        await runtime?.dispose();
    });

    it("hands off more bytes than the off-thread threshold and decodes exactly what unified mode does", async () => {
        let numSealedBytes = 0;
        hooks.afterSeal = (manifest) => {
            numSealedBytes = manifest.tokens.length * bytesPerToken(engine.layout);
        };
        const result = await engine.generate({
            workspace: freshWorkspace(),
            promptTokens: promptOf(engine, NUM_PROMPT_TOKENS),
            maxTokens: MAX_TOKENS
        });
        delete hooks.afterSeal;
        expect(numSealedBytes).toBeGreaterThanOrEqual(OFF_THREAD_MIN_BYTES); // the batch went to the hashing threads
        expect(result.numHandedOffTokens).toBe(NUM_PROMPT_TOKENS - 1);
        expect(result.tokens).toEqual(reference);
        await expectEngineClean(engine);
    });

    // Pages big enough that one alone is worth a hashing thread (the tiny model's 512 bytes a token:
    // one full page is the off-thread threshold), a prompt of one full page and a short one.
    const bigPagesConfig = (pageTokens: number) => ({
        ...config,
        window: 2 * pageTokens,
        prefillContextSize: 2 * pageTokens,
        decodeContextSize: 2 * pageTokens,
        pageTokens,
        numPages: 4
    });
    const writePaths = [
        {
            path: "exported and scattered a page at a time (states through files)",
            stateExchange: "file",
            // the full page begun off the thread as the second was written; the short last page not
            expectedBegun: [true, false],
            expectedHashedAsWritten: [],
            expectedSavedIntoPages: 0,
            // verified before the state is assembled, the pages hashed again
            expectedVerifiedOnLoad: false
        },
        {
            path: "saved by llama.cpp straight into the pages (states through memory, Kvault's build)",
            stateExchange: "auto",
            // every page hashed by llama.cpp's save as it wrote it: no seal begun on the threads, each
            // sealed with the checksum the save computed
            expectedBegun: [],
            expectedHashedAsWritten: [true, true],
            expectedSavedIntoPages: 1,
            // verified as llama.cpp's load read the pages, no pass over them before
            expectedVerifiedOnLoad: true
        }
    ] as const;
    for (const {
        path,
        stateExchange,
        expectedBegun,
        expectedHashedAsWritten,
        expectedSavedIntoPages,
        expectedVerifiedOnLoad
    } of writePaths) {
        it(`seals a state ${path}: a page's seal begun as it is finished where pages finish one by one, taken from the save where it hashed them, and decodes the same`, async () => {
            const pageTokens = 2048;
            const bigPages = await startTinyEngine(runtime, { ...bigPagesConfig(pageTokens), stateExchange });
            try {
                expect(pageTokens * bytesPerToken(bigPages.layout)).toBeGreaterThanOrEqual(OFF_THREAD_MIN_BYTES);
                expect(bigPages.stateExchange.kind, bigPages.stateExchange.reason).toBe(stateExchange === "file" ? "file" : "memory");
                const beginSeal = bigPages.pool.beginSeal.bind(bigPages.pool);
                const begun: Promise<boolean>[] = []; // in the order the pages were finished
                bigPages.pool.beginSeal = (pageId, generation) => {
                    const wasBegun = beginSeal(pageId, generation);
                    begun.push(wasBegun);
                    return wasBegun;
                };
                const beginSealWith = bigPages.pool.beginSealWith.bind(bigPages.pool);
                const hashedAsWritten: boolean[] = [];
                bigPages.pool.beginSealWith = (pageId, generation, hashed) => {
                    const recorded = beginSealWith(pageId, generation, hashed);
                    hashedAsWritten.push(recorded);
                    return recorded;
                };
                const verifyPages = vi.spyOn(bigPages.pool, "verifyPages");
                const verifyPagesRecomputed = vi.spyOn(bigPages.pool, "verifyPagesRecomputed");
                const result = await bigPages.generate({
                    workspace: freshWorkspace(),
                    promptTokens: promptOf(bigPages, NUM_PROMPT_TOKENS),
                    maxTokens: MAX_TOKENS
                });
                expect(await Promise.all(begun)).toEqual(expectedBegun);
                expect(hashedAsWritten).toEqual(expectedHashedAsWritten);
                expect([verifyPagesRecomputed.mock.calls.length, verifyPages.mock.calls.length]).toEqual(
                    expectedVerifiedOnLoad ? [1, 0] : [0, 1]
                );
                expect(bigPages.counters.statesSavedIntoPages).toBe(expectedSavedIntoPages);
                expect(result.tokens).toEqual(reference);
                await expectEngineClean(bigPages);
            } finally {
                await bigPages.dispose();
            }
        });
    }

    it("refuses a byte flipped in the last page after the seal, decodes nothing, and serves the next request", async () => {
        const failuresBefore = engine.counters.integrityFailures;
        const tokensSeen: number[] = [];
        hooks.afterSeal = (manifest, pool) => {
            pool.injectByteFlip(manifest.pages.at(-1)!, manifest.generation, 3);
        };
        await expect(
            engine.generate({
                workspace: freshWorkspace(),
                promptTokens: promptOf(engine, NUM_PROMPT_TOKENS),
                maxTokens: MAX_TOKENS,
                onToken: (token) => {
                    tokensSeen.push(token);
                }
            })
        ).rejects.toMatchObject({ code: "handoff_checksum_mismatch" });
        delete hooks.afterSeal;
        expect(tokensSeen).toEqual([]);
        expect(engine.counters.integrityFailures).toBe(failuresBefore + 1);
        expect(engine.pool.counters.checksumFailures).toBe(1);
        await expectEngineClean(engine);

        const next = await engine.generate({
            workspace: freshWorkspace(),
            promptTokens: promptOf(engine, NUM_PROMPT_TOKENS),
            maxTokens: MAX_TOKENS
        });
        expect(next.tokens).toEqual(reference);
        await expectEngineClean(engine);
    });
});
