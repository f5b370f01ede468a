import { describe, expect, it } from "vitest";
import { engineConfigFor } from "../../../../host/settings/engineConfigFor.js";
import { engineSettingDefaults } from "../../../../host/settings/KvaultSettings.js";

describe("engineConfigFor: GPU offload", () => {
    it("keeps the GPU backend for auto and a number, which alone sets the layers", () => {
        expect(engineConfigFor(engineSettingDefaults)).toMatchObject({ gpu: "auto", gpuLayers: undefined });
        expect(engineConfigFor({ ...engineSettingDefaults, gpu: 12 })).toMatchObject({ gpu: "auto", gpuLayers: 12 });
        expect(engineConfigFor({ ...engineSettingDefaults, gpu: 0 })).toMatchObject({ gpu: "auto", gpuLayers: 0 });
    });

    it("uses the CPU alone for off", () => {
        expect(engineConfigFor({ ...engineSettingDefaults, gpu: "off" })).toMatchObject({ gpu: false, gpuLayers: undefined });
    });
});
