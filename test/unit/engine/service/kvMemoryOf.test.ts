import { describe, expect, it } from "vitest";
import { kvMemoryOf } from "../../../../engine/service/kvMemoryOf.js";

// A model of 32 blocks and an output layer (node-llama-cpp's totalLayers: 33).
const layers = (numOnDevice: number) => ({ numOnDevice, numTotal: 33, numPlanned: numOnDevice });

describe("kvMemoryOf: where the contexts' KV lives", () => {
    it("keeps it in RAM on the CPU, and in device memory when every block is offloaded", () => {
        expect(kvMemoryOf({ backend: "cpu", layers: { numOnDevice: 0, numTotal: 33, numPlanned: 0 } })).toEqual({
            where: "ram",
            numLayersOnDevice: 0,
            numLayers: 32
        });
        expect(kvMemoryOf({ backend: "vulkan", layers: layers(33) })).toEqual({ where: "device", numLayersOnDevice: 32, numLayers: 32 });
        // every block but not the output layer: the KV is all on the device still
        expect(kvMemoryOf({ backend: "cuda", layers: layers(32) })).toEqual({ where: "device", numLayersOnDevice: 32, numLayers: 32 });
    });

    it("splits it by layer when only some blocks are offloaded (--gpu-layers N), and keeps it in RAM with none", () => {
        expect(kvMemoryOf({ backend: "vulkan", layers: layers(20) })).toEqual({ where: "split", numLayersOnDevice: 20, numLayers: 32 });
        expect(kvMemoryOf({ backend: "vulkan", layers: layers(0) })).toEqual({ where: "ram", numLayersOnDevice: 0, numLayers: 32 });
    });
});
