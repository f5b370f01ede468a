import type { KvMemory } from "../../contract/EngineSnapshot.js";

/** Where a holder's KV bytes are, in a few words: "device memory", "RAM", or "device memory and RAM". */
export function kvWhereLabel(where: KvMemory["where"]): string {
    return where === "device" ? "device memory" : where === "ram" ? "RAM" : "device memory and RAM";
}

/**
 * Where a context's KV lives, said in full: in device memory, in RAM, or split with the layers of
 * each, e.g. "KV split: 20 of 32 layers' KV in device memory, 12 in RAM".
 */
export function kvMemoryLabel(kvMemory: KvMemory): string {
    if (kvMemory.where !== "split") {
        return `KV in ${kvWhereLabel(kvMemory.where)}`;
    }
    const { numLayersOnDevice, numLayers } = kvMemory;
    return `KV split: ${numLayersOnDevice} of ${numLayers} layers' KV in device memory, ${numLayers - numLayersOnDevice} in RAM`;
}
