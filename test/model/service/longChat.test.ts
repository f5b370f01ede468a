import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineConfigInput } from "../../../engine/EngineConfig.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { Conversation } from "../../support/chatDriver.js";
import { expectEngineClean } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

const NUM_TURNS = 20;
const config = (mode: "split" | "unified"): EngineConfigInput => ({
    modelPath: generatedModelPath("tiny"),
    mode,
    window: 2048,
    prefillContextSize: 2048,
    decodeContextSize: 2048,
    numDecodeSequences: 1,
    pageTokens: 16,
    numPages: 160,
    inPlacePrefillTokens: 60
});

/** Turn 7 and turn 14 paste something long: those deltas go through prefill and the handoff, with the history. */
function userText(turn: number): string {
    return turn % 7 === 0 && turn > 0
        ? `Here is a long paste for turn ${turn}: ${"the pages of each workspace stay apart; ".repeat(4)}`
        : `Turn ${turn}: a short question.`;
}

describe("a 20-turn chat evaluates only each turn's new tokens", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        // 2 threads whatever cores the test's lane has (it holds both lanes: test/support/testLanes.ts):
        // the two modes' answers are floating-point results of differently shaped contexts, equal at 2
        // threads on every machine this ran on; at 1 thread (a lane pinned to one core) one guest's split
        // and unified answers part at turn 11, before the handoff's native hashing as after it
        runtime = await LlamaRuntime.start({ gpu: false, maxThreads: 2 });
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    it("reuses everything it holds, by its own count and by node-llama-cpp's token meters, and answers as unified mode does", async () => {
        const split = await EngineService.start(config("split"), { runtime });
        const unified = await EngineService.start(config("unified"), { runtime });
        try {
            const conversation = new Conversation("long", { temperature: 0, maxTokens: 5 });
            const reference = new Conversation("long", { temperature: 0, maxTokens: 5 });
            const meter = (): number => split.engine.decode.numEvaluatedTokens + (split.engine.prefill?.numEvaluatedTokens ?? 0);
            let previous: { promptTokens: number; completionTokens: number; finishReason: string } | undefined;
            let numHandoffs = 0;
            for (let turn = 0; turn < NUM_TURNS; turn++) {
                const handoffsBefore = split.engine.pool.counters.numReservations;
                const meterBefore = meter();
                const numMessagesBefore = conversation.messages.length;
                const result = await conversation.turn(split, userText(turn));
                await reference.turn(unified, userText(turn));
                const { usage } = result;

                expect(usage.evaluatedPromptTokens + usage.cachedPromptTokens).toBe(usage.promptTokens);
                if (previous !== undefined) {
                    // Held: the previous prompt and every answer token it evaluated (a length-stopped
                    // answer's last token was sampled, not yet evaluated).
                    const held = previous.promptTokens + previous.completionTokens - (previous.finishReason === "length" ? 1 : 0);
                    expect(usage.cachedPromptTokens, `turn ${turn}`).toBe(held);
                    // Evaluated: the template's close of the last answer, the new user turn, the assistant's
                    // opening, and a length-stopped answer's last token. Nothing before.
                    const continuation = (await split.renderer.renderContinuation(
                        conversation.messages.slice(0, numMessagesBefore + 1),
                        numMessagesBefore - 1
                    ))!;
                    expect(usage.evaluatedPromptTokens, `turn ${turn}`).toBe(
                        continuation.length + (previous.finishReason === "length" ? 1 : 0)
                    );
                }
                // node-llama-cpp's own meters: prompt tokens evaluated plus answer tokens fed back.
                const fedBack = usage.completionTokens - (result.finishReason === "length" ? 1 : 0);
                expect(meter() - meterBefore, `turn ${turn}`).toBe(usage.evaluatedPromptTokens + fedBack);
                if (split.engine.pool.counters.numReservations > handoffsBefore) {
                    numHandoffs++;
                }
                previous = {
                    promptTokens: usage.promptTokens,
                    completionTokens: usage.completionTokens,
                    finishReason: result.finishReason
                };
            }
            expect(numHandoffs).toBe(2); // turns 7 and 14: history to prefill and back, each through pages
            expect(conversation.answers).toEqual(reference.answers);
            await expectEngineClean(split.engine);
        } finally {
            await split.dispose();
            await unified.dispose();
        }
    }, 300_000);
});
