import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../contract/engineProtocol.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { SeededRandom } from "../../../synthetic/model/SeededRandom.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

const SOAK_MS = 20_000;
const NUM_WORKSPACES = 8;

describe("soak: 8 workspaces, random prompt lengths, random cancels and swaps", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    it(`keeps I1–I7 after every step for ${SOAK_MS / 1000} s, and returns to baseline`, async () => {
        const service = await EngineService.start(
            {
                modelPath: generatedModelPath("tiny"),
                ...tinyEngineConfig,
                window: 512,
                prefillContextSize: 512,
                decodeContextSize: 512,
                numDecodeSequences: 2,
                numPages: 96,
                inPlacePrefillTokens: 12
            },
            { runtime }
        );
        const random = new SeededRandom(20261130);
        const histories = Array.from({ length: NUM_WORKSPACES }, () => [] as ChatMessage[]);
        const outcomes: Record<string, number> = {};
        const violations: string[] = [];
        const rssBefore = process.memoryUsage().rss;
        let step = 0;
        try {
            const deadline = performance.now() + SOAK_MS;
            const worker = async (lane: number): Promise<void> => {
                while (performance.now() < deadline) {
                    // bounded by the clock
                    const workspace = random.nextU32() % NUM_WORKSPACES;
                    const history = histories[workspace]!;
                    const words = 1 + (random.nextU32() % 60);
                    const message: ChatMessage = { role: "user", content: `lane ${lane} step ${step++}: ${"page lease ".repeat(words)}` };
                    const controller = new AbortController();
                    const cancelAfterMs = random.nextU32() % 4 === 0 ? random.nextU32() % 200 : undefined;
                    const timer = cancelAfterMs === undefined ? undefined : setTimeout(() => controller.abort(), cancelAfterMs);
                    try {
                        const result = await service.chat(
                            {
                                requestId: `soak-${step}`,
                                workspace: `soak-${workspace}`,
                                messages: [...history, message],
                                sampling: { temperature: 0, maxTokens: 1 + (random.nextU32() % 8) }
                            },
                            undefined,
                            controller.signal
                        );
                        outcomes.finished = (outcomes.finished ?? 0) + 1;
                        history.push(message, { role: "assistant", content: result.text });
                        if (history.length > 12) {
                            history.splice(0, history.length);
                        } // start over before the window fills
                    } catch (error) {
                        const code = (error as { code?: string }).code ?? `unknown: ${(error as Error).stack}`;
                        outcomes[code] = (outcomes[code] ?? 0) + 1;
                        if (code === "context_length_exceeded") {
                            history.splice(0, history.length);
                        }
                    } finally {
                        clearTimeout(timer);
                    }
                    const audit = service.engine.audit({ scanFreePages: true });
                    if (!audit.ok) {
                        violations.push(...audit.violations.map((violation) => violation.message)); // the pool's and the engine's
                    }
                }
            };
            await Promise.all([worker(0), worker(1), worker(2), worker(3)]);
            expect(violations.slice(0, 5)).toEqual([]);
            expect(outcomes.finished, JSON.stringify(outcomes)).toBeGreaterThan(10);
            expect(outcomes.request_cancelled ?? 0).toBeGreaterThan(0);
            expect(
                Object.keys(outcomes).filter((code) => !["finished", "request_cancelled", "context_length_exceeded"].includes(code))
            ).toEqual([]);
            expect(service.engine.counters.swapOuts).toBeGreaterThan(0);
            expect(service.engine.counters.swapIns).toBeGreaterThan(0);
            await expectEngineClean(service.engine);
            expect(fs.readdirSync(service.engine.stateDirectory.path)).toEqual([]);
            // Memory back near baseline: the arena is fixed, pages are reused, nothing accumulates per request.
            expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
        } finally {
            await service.dispose();
        }
    }, 120_000);
});
