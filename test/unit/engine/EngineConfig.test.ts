import { describe, expect, it } from "vitest";
import { EngineConfigError, resolveEngineConfig } from "../../../engine/EngineConfig.js";

describe("resolveEngineConfig: prefill sequences", () => {
    it("gives one prefill sequence per decode sequence by default, so turns arriving together prefill together", () => {
        expect(resolveEngineConfig({ modelPath: "m.gguf" }).numPrefillSequences).toBe(4);
        expect(resolveEngineConfig({ modelPath: "m.gguf", numDecodeSequences: 2 }).numPrefillSequences).toBe(2);
        expect(resolveEngineConfig({ modelPath: "m.gguf", numDecodeSequences: 8, numPrefillSequences: 1 }).numPrefillSequences).toBe(1);
    });

    it("refuses a count below one with the number it was given", () => {
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", numPrefillSequences: 0 })).toThrow(EngineConfigError);
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", numPrefillSequences: 1.5 })).toThrow(
            "numPrefillSequences is 1.5; it must be a whole number of at least 1."
        );
    });
});

describe("resolveEngineConfig: gpuLayers", () => {
    it("leaves it to node-llama-cpp when absent, and keeps a whole number of layers", () => {
        expect(resolveEngineConfig({ modelPath: "m.gguf" }).gpuLayers).toBeUndefined();
        expect(resolveEngineConfig({ modelPath: "m.gguf", gpuLayers: 0 }).gpuLayers).toBe(0);
        expect(resolveEngineConfig({ modelPath: "m.gguf", gpuLayers: 12 }).gpuLayers).toBe(12);
    });

    it("refuses a negative or fractional count with the number it was given", () => {
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", gpuLayers: -1 })).toThrow(
            "gpuLayers is -1; it must be a whole number of layers of at least 0, or left out for node-llama-cpp's choice."
        );
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", gpuLayers: 1.5 })).toThrow(EngineConfigError);
    });
});

describe("resolveEngineConfig: the binary and the state exchange", () => {
    it("prefers a local build and the in-memory path by default, and takes the prebuilt and files when asked", () => {
        expect(resolveEngineConfig({ modelPath: "m.gguf" })).toMatchObject({ llamaBinary: "auto", stateExchange: "auto" });
        expect(resolveEngineConfig({ modelPath: "m.gguf", llamaBinary: "prebuilt", stateExchange: "file" })).toMatchObject({
            llamaBinary: "prebuilt",
            stateExchange: "file"
        });
    });

    it("refuses any other value, naming it and the ones there are", () => {
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", llamaBinary: "local" as "auto" })).toThrow(
            'llamaBinary is "local"; use "auto" or "prebuilt".'
        );
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", stateExchange: "memory" as "auto" })).toThrow(
            'stateExchange is "memory"; use "auto" or "file".'
        );
    });
});
