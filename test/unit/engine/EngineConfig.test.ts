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

describe("resolveEngineConfig: speculative decoding", () => {
    it("is off by default, and takes input lookup, or a draft model with how it drafts", () => {
        const plain = resolveEngineConfig({ modelPath: "m.gguf" });
        expect(plain.speculation).toBeUndefined();
        expect(plain).toMatchObject({ draftMaxTokens: 16, draftMinConfidence: 0.6 });
        expect(resolveEngineConfig({ modelPath: "m.gguf", speculation: "input-lookup" }).speculation).toBe("input-lookup");
        expect(
            resolveEngineConfig({
                modelPath: "m.gguf",
                speculation: "draft-model",
                draftModelPath: "d.gguf",
                draftMaxTokens: 4,
                draftMinConfidence: 0
            })
        ).toMatchObject({ speculation: "draft-model", draftModelPath: "d.gguf", draftMaxTokens: 4, draftMinConfidence: 0 });
    });

    it("refuses a draft model without its path, a path without the draft model, and drafting out of range", () => {
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", speculation: "draft-model" })).toThrow(
            'speculation is "draft-model" but draftModelPath is empty'
        );
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", draftModelPath: "d.gguf" })).toThrow(
            'draftModelPath is given but speculation is off; set speculation to "draft-model" to use it, or leave draftModelPath out.'
        );
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", speculation: "input-lookup", draftModelPath: "d.gguf" })).toThrow(
            'draftModelPath is given but speculation is "input-lookup"'
        );
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", speculation: "ngram" as "input-lookup" })).toThrow(
            'speculation is "ngram"; use "input-lookup" or "draft-model", or leave it out for none.'
        );
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", draftMaxTokens: 0 })).toThrow(
            "draftMaxTokens is 0; it must be a whole number of tokens from 1 to 64."
        );
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", draftMinConfidence: 1.2 })).toThrow(
            "draftMinConfidence is 1.2; it must be a probability from 0 to 1."
        );
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", draftMinConfidence: Number.NaN })).toThrow(EngineConfigError);
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

describe("resolveEngineConfig: prefillChunkTokens", () => {
    it("chunks a prompt beside streams in 128 tokens by default, and takes any whole number from 64", () => {
        expect(resolveEngineConfig({ modelPath: "m.gguf" }).prefillChunkTokens).toBe(128);
        expect(resolveEngineConfig({ modelPath: "m.gguf", prefillChunkTokens: 64 }).prefillChunkTokens).toBe(64);
    });

    it("refuses fewer than the 64 tokens flash attention's tiled path needs, and fractions, naming the value", () => {
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", prefillChunkTokens: 32 })).toThrow(
            "prefillChunkTokens is 32; it must be a whole number of at least 64"
        );
        expect(() => resolveEngineConfig({ modelPath: "m.gguf", prefillChunkTokens: 100.5 })).toThrow(EngineConfigError);
    });
});
