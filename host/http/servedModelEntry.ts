import type { EngineInfo } from "../../contract/engineProtocol.js";
import type { ModelFacts } from "../../contract/models.js";
import { computeFields } from "./computeFields.js";

/**
 * The `/v1/models` entry of the loaded model: OpenAI's four fields, vLLM's `max_model_len` (the
 * window the engine serves, in tokens), and under `kvault` what the engine measured and what the
 * file's header says. Field names are snake_case, as the rest of the API's. Without facts (the
 * header could not be read again) the entry says so in `kvault.facts_error` and keeps the rest.
 */
export function servedModelEntry(
    id: string,
    info: EngineInfo,
    facts: ModelFacts | undefined,
    factsError?: string
): Record<string, unknown> {
    const engine = {
        mode: info.mode.effective,
        paged: info.mode.effective === "split",
        ...(info.mode.reason === undefined ? {} : { unpaged_reason: info.mode.reason }),
        kv_cache_type: info.kvCacheType,
        // a page holds pageTokens positions of every layer's K and V: this is the measured size of a token's KV
        kv_bytes_per_token: info.pageBytes / info.pageTokens,
        page_tokens: info.pageTokens,
        pool_pages: info.numPages,
        pool_bytes: info.numPages * info.pageBytes,
        decode_sequences: info.numDecodeSequences,
        backend: info.backend,
        compute: computeFields(info.compute)
    };
    return {
        id,
        object: "model",
        created: 0,
        owned_by: "kvault",
        max_model_len: info.window.limit,
        kvault: {
            ...engine,
            ...(facts === undefined ? { facts_error: factsError ?? "the model file's header was not read" } : fileFacts(facts, info))
        }
    };
}

function fileFacts(facts: ModelFacts, info: EngineInfo): Record<string, unknown> {
    const kvBytesPerToken = facts.kvBytesPerTokenByType[info.kvCacheType] ?? null;
    return {
        name: facts.name ?? null,
        architecture: facts.architecture,
        quantization: facts.fileType ?? null,
        parameters: facts.parameterCount ?? null,
        file_bytes: facts.fileBytes,
        layers: facts.numLayers,
        heads: facts.heads === undefined ? null : { q: facts.heads.numHeads, kv: facts.heads.numKvHeads },
        head_size: facts.heads === undefined ? null : { k: facts.heads.kHeadSize, v: facts.heads.vHeadSize },
        context_window: facts.trainContextSize ?? null,
        sliding_window: facts.slidingWindow ?? null,
        kv_bytes_per_token_by_type: Object.fromEntries(
            Object.entries(facts.kvBytesPerTokenByType).map(([type, bytes]) => [type, bytes ?? null])
        ),
        file_paged: facts.memory.plainKvCache,
        ...(facts.memory.plainKvCache ? {} : { file_unpaged_reason: facts.memory.reason }),
        memory: {
            machine_ram_bytes: facts.machineRamBytes,
            // the window of every decode sequence, at the engine's type: what the KV of full workspaces takes
            kv_cache_bytes: kvBytesPerToken === null ? null : kvBytesPerToken * info.window.limit * info.numDecodeSequences,
            cpu_ram_bytes: facts.estimate?.cpu.ramBytes ?? null,
            gpu_vram_bytes: facts.estimate?.gpu.vramBytes ?? null,
            gpu_ram_bytes: facts.estimate?.gpu.ramBytes ?? null,
            fits_cpu_ram: facts.estimate === undefined ? null : facts.estimate.cpu.ramBytes <= facts.machineRamBytes
        }
    };
}

/**
 * Reads the loaded model's facts (`modelFacts`, per path) and builds its entry; a failed read is
 * said in the entry, never a 500. A server given no `modelFacts` lists OpenAI's four fields alone.
 */
export async function describeServedModel(
    id: string,
    info: EngineInfo,
    modelFacts: ((modelPath: string) => Promise<ModelFacts>) | undefined
): Promise<Record<string, unknown>> {
    if (modelFacts === undefined) {
        return { id, object: "model", created: 0, owned_by: "kvault" };
    }
    try {
        return servedModelEntry(id, info, await modelFacts(info.modelPath));
    } catch (error) {
        return servedModelEntry(id, info, undefined, `the model file's header could not be read: ${(error as Error).message}`);
    }
}
