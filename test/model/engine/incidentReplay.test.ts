import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CapacityConfigError } from "../../../engine/EngineConfig.js";
import { ContextLengthExceededError } from "../../../engine/request/requestErrors.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { alice, expectEngineClean, promptOf, startTinyEngine } from "../../support/engineFixtures.js";

// The 2026 incident: a prefill pool smaller than the advertised window accepted a request that did
// not fit, handed over one page of eight, and decode generated over stale pages (docs/FAILURE-MODES.md:
// undersized prefill pool, decode over stale pages).
describe("the 2026 incident replayed: a window configured above the prefill capacity", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    it("clamps the window to the measured prefill capacity, visibly", async () => {
        const engine = await startTinyEngine(runtime, { window: 512, prefillContextSize: 256, decodeContextSize: 512 });
        try {
            expect(engine.window).toMatchObject({ configured: 512, limit: 256, boundBy: "prefill", clamped: true });
            expect(engine.prefill!.sequenceCapacity).toBe(256);
            expect(engine.decode.sequenceCapacity).toBe(512);
        } finally {
            await engine.dispose();
        }
    });

    it("refuses to start when clamping is not allowed, with the numbers and what to do", async () => {
        await expect(
            startTinyEngine(runtime, { window: 512, prefillContextSize: 256, decodeContextSize: 512, onWindowAboveCapacity: "refuse" })
        ).rejects.toThrow(
            new CapacityConfigError(
                "The window is set to 512 tokens, but the measured prefill capacity is 256. Lower the window to 256 or give the prefill a larger context."
            )
        );
    });

    it("rejects a request between the prefill capacity and the window at the door: typed, with the numbers, no page reserved, nothing decoded", async () => {
        const engine = await startTinyEngine(runtime, { window: 512, prefillContextSize: 256, decodeContextSize: 512 });
        try {
            const tokensSeen: number[] = [];
            const rejection = engine.generate({
                workspace: alice,
                promptTokens: promptOf(engine, 300),
                maxTokens: 8,
                onToken: (token) => {
                    tokensSeen.push(token);
                }
            });
            await expect(rejection).rejects.toBeInstanceOf(ContextLengthExceededError);
            await expect(rejection).rejects.toMatchObject({
                code: "context_length_exceeded",
                numPromptTokens: 300,
                maxTokens: 8,
                limit: 256,
                boundBy: "prefill",
                message:
                    "This request needs 308 tokens (300 of prompt + 8 to generate); the limit is 256, set by the measured prefill capacity. " +
                    "Shorten the prompt, ask for fewer tokens, or start a new chat."
            });
            expect(tokensSeen).toEqual([]);
            expect(engine.pool.counters.numReservations).toBe(0);
            expect(engine.counters).toMatchObject({ rejected: 1, finished: 0, failed: 0 });
            await expectEngineClean(engine);

            // Just under the capacity is served.
            const served = await engine.generate({ workspace: alice, promptTokens: promptOf(engine, 248), maxTokens: 8 });
            expect(served.tokens).toHaveLength(8);
            expect(served.numHandedOffTokens).toBe(247);
            expect(engine.pool.counters.numReservations).toBe(1);
            await expectEngineClean(engine);
        } finally {
            await engine.dispose();
        }
    });

    // Undersized prefill pool: 15 pages of 16 tokens = 240 tokens of pool against a 256-token window.
    it.each([
        ["capacity − 1", 239, "served"],
        ["capacity", 240, "served"],
        ["capacity + 1", 241, "rejected"],
        ["window + 1", 257, "rejected"]
    ])(
        "a pool one page short of the window: a request needing %s (%i tokens) is %s at intake, never hangs",
        async (_, numNeeded, outcome) => {
            const engine = await startTinyEngine(runtime, { window: 256, numPages: 15 });
            try {
                expect(engine.window).toMatchObject({ limit: 240, boundBy: "pool", clamped: true });
                const run = engine.generate({ workspace: alice, promptTokens: promptOf(engine, numNeeded - 1), maxTokens: 1 });
                if (outcome === "served") {
                    expect((await run).tokens).toHaveLength(1);
                } else {
                    await expect(run).rejects.toMatchObject({ code: "context_length_exceeded", limit: 240, boundBy: "pool" });
                }
                await expectEngineClean(engine);
            } finally {
                await engine.dispose();
            }
        }
    );
});
