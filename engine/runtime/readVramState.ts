import type { LlamaRuntime } from "./LlamaRuntime.js";

/** VRAM of the GPU a runtime uses, bytes: node-llama-cpp's `getVramState()`; undefined on the CPU. */
export async function readVramState(runtime: LlamaRuntime): Promise<{ usedBytes: number; totalBytes: number } | undefined> {
    if (runtime.backend === "cpu") {
        return undefined;
    }
    const { used, total } = await runtime.llama.getVramState();
    return { usedBytes: used, totalBytes: total };
}
