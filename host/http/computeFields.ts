import type { EngineCompute } from "../../contract/engineCompute.js";
import type { EngineClient } from "../../contract/engineProtocol.js";

/**
 * What the engine computes on, in the API's snake_case: the same fields in /health and in
 * /v1/models' kvault block (`compute`), from EngineInfo.compute as the engine measured it.
 */
export function computeFields(compute: EngineCompute): Record<string, unknown> {
    return {
        backend: compute.backend,
        binary: compute.binary,
        devices: compute.devices.map((device) => ({ name: device.name, type: device.type })),
        layers_on_device: compute.layers.numOnDevice,
        layers_total: compute.layers.numTotal,
        layers_planned: compute.layers.numPlanned,
        device_memory_used_bytes: compute.deviceMemory?.usedBytes ?? null,
        device_memory_total_bytes: compute.deviceMemory?.totalBytes ?? null,
        ...(compute.fallback === undefined ? {} : { fallback: compute.fallback }),
        ...(compute.slowerPath === undefined ? {} : { slower_path: compute.slowerPath })
    };
}

/** The engine's compute, or undefined before its first start (a supervisor's info is read only once it has one). */
export function engineComputeOf(engine: Pick<EngineClient, "info">): EngineCompute | undefined {
    try {
        return engine.info.compute;
    } catch {
        return undefined;
    }
}
