import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GpuLayersAboveModelError, LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { generatedModelPath } from "../support/generatedModels.js";

describe("a number of GPU layers, through node-llama-cpp's loadModel", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false }); // the CPU, whatever GPU drivers the machine has
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    it("loads with it; on the CPU node-llama-cpp keeps every layer there", async () => {
        const model = await runtime.loadModel(generatedModelPath("tiny"), 2);
        try {
            expect(runtime.backend).toBe("cpu");
            expect(model.gpuLayers).toBe(0);
            expect(model.tokenize("hello").length).toBeGreaterThan(0);
        } finally {
            await model.dispose();
        }
    });

    it("refuses more layers than the model has, naming both numbers, where node-llama-cpp would clamp", async () => {
        const path = generatedModelPath("tiny");
        const probe = await runtime.loadModel(path, 0);
        const totalLayers = probe.fileInsights.totalLayers;
        await probe.dispose();
        const loading = runtime.loadModel(path, totalLayers + 1);
        await expect(loading).rejects.toBeInstanceOf(GpuLayersAboveModelError);
        await expect(loading).rejects.toThrow(
            `gpuLayers is ${totalLayers + 1}, but this model has ${totalLayers - 1} layers and an output layer (${totalLayers} in all); ` +
                `give 0 to ${totalLayers}, or leave it out for node-llama-cpp's choice.`
        );
        const all = await runtime.loadModel(path, totalLayers);
        await all.dispose();
    });
});
