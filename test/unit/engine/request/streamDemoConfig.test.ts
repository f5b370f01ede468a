import { describe, expect, it } from "vitest";
import { EngineConfigError, MAX_TOKEN_DELAY_MS, resolveEngineConfig } from "../../../../engine/EngineConfig.js";

describe("the streaming demo mode in the engine's configuration", () => {
    it("is off by default and takes a whole number of milliseconds up to the limit", () => {
        expect(resolveEngineConfig({ modelPath: "m.gguf" }).tokenDelayMs).toBe(0);
        expect(resolveEngineConfig({ modelPath: "m.gguf", tokenDelayMs: MAX_TOKEN_DELAY_MS }).tokenDelayMs).toBe(1_000);
    });

    it.each([-1, 2.5, 1_001])("refuses a token delay of %s ms, with the range", (tokenDelayMs) => {
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", tokenDelayMs })).toThrow(EngineConfigError);
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", tokenDelayMs })).toThrow(
            `tokenDelayMs is ${tokenDelayMs}; it must be a whole number of milliseconds from 0 to 1000.`
        );
    });
});
