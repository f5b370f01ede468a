import type { KvMemory } from "../../contract/EngineSnapshot.js";
import type { EngineCompute } from "../../contract/engineCompute.js";

/**
 * Where the contexts' KV lives, from the layers node-llama-cpp placed on the device: llama.cpp keeps
 * each offloaded block's KV in device memory beside it (offload_kqv, on by default) and offloads the
 * last blocks first, the output layer only once every block is there. `layers.numTotal` counts the
 * blocks and the output layer, so the layers with KV are one fewer. On the CPU all of it is in RAM.
 */
export function kvMemoryOf(compute: Pick<EngineCompute, "backend" | "layers">): KvMemory {
    const numLayers = Math.max(0, compute.layers.numTotal - 1);
    const numLayersOnDevice = compute.backend === "cpu" ? 0 : Math.min(compute.layers.numOnDevice, numLayers);
    const where = numLayersOnDevice === 0 ? "ram" : numLayersOnDevice === numLayers ? "device" : "split";
    return { where, numLayersOnDevice, numLayers };
}
