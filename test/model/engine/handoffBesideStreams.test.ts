import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KvEngine } from "../../../engine/KvEngine.js";
import { workspaceId } from "../../../engine/core/ids.js";
import { specialTokens } from "../../../synthetic/model/syntheticVocabulary.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { expectEngineClean, promptOf, startTinyEngine } from "../../support/engineFixtures.js";

// A prompt that arrives while other workspaces stream is handed off between two of their decode
// steps: its pages load into the decode context under the context's lock, which node-llama-cpp
// holds for as long as decodes are queued, and with the streams kept in one batch a step the
// queue is never empty while one generates (gatherDecodes lets such operations in between).

const WINDOW = 1024;
const STREAM_TOKENS = 900;
/** The streams never end by themselves: the tiny model's random weights would end one wherever its greedy sums lead. */
const NEVER_END = { temperature: 0, tokenBias: [specialTokens.eos.id, specialTokens.imEnd.id].map((token) => ({ token, bias: -100 })) };
describe("a handoff beside running streams", () => {
    let runtime: LlamaRuntime;
    let engine: KvEngine;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        engine = await startTinyEngine(runtime, {
            window: WINDOW,
            prefillContextSize: WINDOW,
            decodeContextSize: WINDOW,
            numDecodeSequences: 3,
            numPages: (3 * WINDOW) / 16
        });
    });
    afterAll(async () => {
        await engine.dispose();
        await runtime.dispose();
    });

    it("reaches its first token while two streams go on, not after their last", async () => {
        const streamed = [0, 0];
        let atFirstToken: number[] | undefined;
        let late: Promise<unknown> | undefined;
        const streams = [0, 1].map((index) =>
            engine.generate({
                workspace: workspaceId(`streaming-${index}`),
                promptTokens: promptOf(engine, 20 + index, `Stream ${index} goes on and on. `),
                maxTokens: STREAM_TOKENS,
                sampling: NEVER_END,
                onToken: () => {
                    streamed[index]!++;
                    if (index === 0 && streamed[0] === 10) {
                        late = engine.generate({
                            workspace: workspaceId("arriving"),
                            promptTokens: promptOf(engine, 120, "A prompt handed off through pages while others stream. "),
                            maxTokens: 4,
                            onToken: () => {
                                atFirstToken ??= [...streamed];
                            }
                        });
                    }
                    return undefined;
                }
            })
        );
        const results = await Promise.all(streams);
        const arrived = (await late) as { numHandedOffTokens: number };
        expect(arrived.numHandedOffTokens, "the prompt went through prefill and pages").toBeGreaterThan(0);
        expect(atFirstToken, "the arriving prompt's first token").toBeDefined();
        // Neither stream can end early (NEVER_END); the longer is the witness all the same.
        const longest = results.reduce((best, result, index) => (result.tokens.length > results[best]!.tokens.length ? index : best), 0);
        const numLongest = results[longest]!.tokens.length;
        expect(numLongest, "a stream that outlasts the handoff by far").toBeGreaterThanOrEqual(300);
        // Waiting for the lock, the prompt would get its first token after the streams' last.
        expect(atFirstToken![longest], `tokens each stream had streamed then: ${atFirstToken!.join(", ")} (of ${numLongest})`).toBeLessThan(
            numLongest / 2
        );
        await expectEngineClean(engine);
    });
});
