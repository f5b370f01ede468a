import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GpuLayersAboveModelError, LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { generatedModelPath } from "../support/generatedModels.js";

describe("a number of GPU layers, through node-llama-cpp's loadModel", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start();
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    it("loads with it; without a GPU node-llama-cpp keeps every layer on the CPU", async () => {
        const model = await runtime.loadModel(generatedModelPath("tiny"), 2);
        try {
            expect(model.gpuLayers).toBe(runtime.backend === "cpu" ? 0 : 2);
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
