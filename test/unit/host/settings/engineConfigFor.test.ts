import { describe, expect, it } from "vitest";
import { engineConfigFor } from "../../../../host/settings/engineConfigFor.js";
import { engineSettingDefaults } from "../../../../host/settings/KvaultSettings.js";

describe("engineConfigFor: GPU offload", () => {
    it("gives the backend and the layers on it as two settings: a number of layers on a named backend too", () => {
        expect(engineConfigFor(engineSettingDefaults)).toMatchObject({ gpu: "auto", gpuLayers: undefined });
        expect(engineConfigFor({ ...engineSettingDefaults, gpuLayers: 12 })).toMatchObject({ gpu: "auto", gpuLayers: 12 });
        expect(engineConfigFor({ ...engineSettingDefaults, gpuLayers: 0 })).toMatchObject({ gpu: "auto", gpuLayers: 0 });
        expect(engineConfigFor({ ...engineSettingDefaults, gpu: "vulkan", gpuLayers: 2 })).toMatchObject({ gpu: "vulkan", gpuLayers: 2 });
    });

    it("uses the CPU alone for off, whatever the layers", () => {
        expect(engineConfigFor({ ...engineSettingDefaults, gpu: "off" })).toMatchObject({ gpu: false, gpuLayers: undefined });
        expect(engineConfigFor({ ...engineSettingDefaults, gpu: "off", gpuLayers: 3 })).toMatchObject({ gpu: false, gpuLayers: undefined });
    });
});

describe("engineConfigFor: speculative decoding", () => {
    it("speculates only when asked, and gives the draft model only to speculation by draft model", () => {
        expect(engineConfigFor(engineSettingDefaults)).toMatchObject({ speculation: undefined, draftModelPath: undefined });
        expect(engineConfigFor({ ...engineSettingDefaults, speculation: "input-lookup", draftModel: "/m/d.gguf" })).toMatchObject({
            speculation: "input-lookup",
            draftModelPath: undefined
        });
        expect(
            engineConfigFor({
                ...engineSettingDefaults,
                speculation: "draft-model",
                draftModel: "/m/d.gguf",
                draftMaxTokens: 8,
                draftMinConfidence: 0
            })
        ).toMatchObject({ speculation: "draft-model", draftModelPath: "/m/d.gguf", draftMaxTokens: 8, draftMinConfidence: 0 });
    });
});
