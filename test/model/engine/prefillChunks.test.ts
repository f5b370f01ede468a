import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KvEngine } from "../../../engine/KvEngine.js";
import { workspaceId } from "../../../engine/core/ids.js";
import { LlamaRoleContext } from "../../../engine/runtime/LlamaRoleContext.js";
import type { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { startTestRuntime } from "../../support/testRuntime.js";
import { alice, bob, promptOf, startTinyEngine } from "../../support/engineFixtures.js";
import { recordBatches, type RecordedBatch } from "../../support/recordBatches.js";

// While a stream decodes, a long prompt prefills in chunks of prefillChunkTokens, each computed in its
// turn between two of the stream's steps with every thread (ComputeTurns); with no stream, in batches
// as large as the batch size. Neither changes a token of either answer.

const WINDOW = 1024;
const BATCH_SIZE = 512;
const CHUNK_TOKENS = 64;
const LONG_PROMPT_TOKENS = 600;
const STREAM_TOKENS = 200;
/** The long prompt is sent once the stream has this many tokens. */
const SEND_AFTER_TOKENS = 5;

const config = {
    window: WINDOW,
    prefillContextSize: WINDOW,
    decodeContextSize: WINDOW,
    numPages: 3 * (WINDOW / 16),
    batchSize: BATCH_SIZE,
    prefillChunkTokens: CHUNK_TOKENS
};
const carol = workspaceId("carol");

describe("a long prompt beside a stream", () => {
    let runtime: LlamaRuntime;
    let engine: KvEngine;
    let batches: RecordedBatch[];
    let streamPrompt: number[];
    let longPrompt: number[];
    let streamAlone: readonly number[];
    let longAlone: readonly number[];

    beforeAll(async () => {
        runtime = await startTestRuntime();
        engine = await startTinyEngine(runtime, config);
        expect(engine.prefill).toBeInstanceOf(LlamaRoleContext);
        batches = recordBatches((engine.prefill as LlamaRoleContext).context);
        streamPrompt = promptOf(engine, 30, "Bob's stream. ");
        longPrompt = promptOf(engine, LONG_PROMPT_TOKENS, "Alice pastes a long document. ");
        const unified = await startTinyEngine(runtime, { ...config, mode: "unified" });
        try {
            streamAlone = (await unified.generate({ workspace: bob, promptTokens: streamPrompt, maxTokens: STREAM_TOKENS })).tokens;
            longAlone = (await unified.generate({ workspace: alice, promptTokens: longPrompt, maxTokens: 4 })).tokens;
        } finally {
            await unified.dispose();
        }
        expect(streamAlone.length, "the stream runs its whole length (no end of generation before it)").toBe(STREAM_TOKENS);
    });
    afterAll(async () => {
        await engine?.dispose();
        await runtime?.dispose();
    });

    it("prefills in chunks between the stream's steps, and both answers are the answers each gives alone", async () => {
        let streamed = 0;
        let streamedAtLongFirstToken: number | undefined;
        let longBatchesFrom = -1;
        let long: Promise<readonly number[]> | undefined;
        const stream = engine.generate({
            workspace: bob,
            promptTokens: streamPrompt,
            maxTokens: STREAM_TOKENS,
            onToken: () => {
                streamed++;
                if (streamed === SEND_AFTER_TOKENS) {
                    longBatchesFrom = batches.length;
                    long = engine
                        .generate({
                            workspace: alice,
                            promptTokens: longPrompt,
                            maxTokens: 4,
                            onToken: () => {
                                streamedAtLongFirstToken ??= streamed;
                            }
                        })
                        .then((result) => result.tokens);
                }
            }
        });
        const streamTokens = (await stream).tokens;
        expect(long, "the long prompt was sent").toBeDefined();
        const longTokens = await long!;

        expect(streamTokens).toEqual(streamAlone);
        expect(longTokens).toEqual(longAlone);
        expect(streamedAtLongFirstToken, "the stream was still running when the long prompt's first token came").toBeLessThan(
            STREAM_TOKENS
        );
        const longBatches = batches.slice(longBatchesFrom).flat();
        const sizes = longBatches.map((item) => item.numTokens);
        expect(
            sizes.reduce((sum, size) => sum + size, 0),
            `the long prompt's batches: ${sizes.join(", ")}`
        ).toBeGreaterThanOrEqual(LONG_PROMPT_TOKENS - 1);
        expect(Math.max(...sizes), `the long prompt's batches: ${sizes.join(", ")}`).toBeLessThanOrEqual(CHUNK_TOKENS);
    });

    it("prefills in batches of the batch size when no stream runs", async () => {
        const from = batches.length;
        const tokens = (await engine.generate({ workspace: carol, promptTokens: longPrompt, maxTokens: 4 })).tokens;
        expect(tokens).toEqual(longAlone);
        const sizes = batches.slice(from).flatMap((batch) => batch.map((item) => item.numTokens));
        expect(sizes[0], `batches: ${sizes.join(", ")}`).toBe(BATCH_SIZE);
    });
});
