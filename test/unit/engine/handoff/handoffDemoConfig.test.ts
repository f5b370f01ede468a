import { describe, expect, it } from "vitest";
import { EngineConfigError, MAX_HANDOFF_STEP_DELAY_MS, resolveEngineConfig } from "../../../../engine/EngineConfig.js";
import { pacedHandoff, unpacedHandoff } from "../../../../engine/handoff/Handoff.js";

describe("the page map's demo mode in the engine's configuration", () => {
    it("is off by default and takes a whole number of milliseconds up to the limit", () => {
        expect(resolveEngineConfig({ modelPath: "m.gguf" }).handoffStepDelayMs).toBe(0);
        expect(resolveEngineConfig({ modelPath: "m.gguf", handoffStepDelayMs: MAX_HANDOFF_STEP_DELAY_MS }).handoffStepDelayMs).toBe(5_000);
    });

    it.each([-1, 1.5, 5_001])("refuses a step delay of %s ms, with the range", (handoffStepDelayMs) => {
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", handoffStepDelayMs })).toThrow(EngineConfigError);
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", handoffStepDelayMs })).toThrow(
            `handoffStepDelayMs is ${handoffStepDelayMs}; it must be a whole number of milliseconds from 0 to 5000.`
        );
    });

    it("paces every step, or none", async () => {
        await expect(unpacedHandoff.beforeStep("prefilling")).resolves.toBeUndefined();
        await expect(pacedHandoff(1).beforeStep("pages to decode")).resolves.toBeUndefined();
        expect(() => pacedHandoff(-5)).toThrow("a handoff step delay of -5 ms");
    });
});
