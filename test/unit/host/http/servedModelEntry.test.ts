import { describe, expect, it } from "vitest";
import type { EngineInfo } from "../../../../contract/engineProtocol.js";
import { describeServedModel } from "../../../../host/http/servedModelEntry.js";

const info: EngineInfo = {
    modelPath: "/models/gemma.gguf",
    modelName: "Gemma",
    backend: "cpu, local build, 2 threads",
    compute: { backend: "cpu", binary: "local build", devices: [], layers: { numOnDevice: 0, numTotal: 19, numPlanned: 0 } },
    mode: { requested: "split", effective: "unified", reason: "Running unified (no prefill/decode split): sliding window." },
    window: { configured: 8192, limit: 4096, boundBy: "decode", clamped: true },
    capacities: { window: 8192, prefill: 4096, decode: 4096, pool: 8192 },
    numDecodeSequences: 2,
    pageTokens: 16,
    numPages: 512,
    pageBytes: 16 * 1088,
    kvCacheType: "q8_0",
    embeddingDimensions: 64
};

describe("describeServedModel", () => {
    it("gives the engine's window as max_model_len and its measured KV type, and says why facts are missing", async () => {
        const entry = await describeServedModel("gemma", info, async () => {
            throw new Error("the file is gone");
        });
        expect(entry).toEqual({
            id: "gemma",
            object: "model",
            created: 0,
            owned_by: "kvault",
            max_model_len: 4096,
            kvault: {
                mode: "unified",
                paged: false,
                unpaged_reason: "Running unified (no prefill/decode split): sliding window.",
                kv_cache_type: "q8_0",
                kv_bytes_per_token: 1088,
                page_tokens: 16,
                pool_pages: 512,
                pool_bytes: 512 * 16 * 1088,
                decode_sequences: 2,
                backend: "cpu, local build, 2 threads",
                compute: {
                    backend: "cpu",
                    binary: "local build",
                    devices: [],
                    layers_on_device: 0,
                    layers_total: 19,
                    layers_planned: 0,
                    device_memory_used_bytes: null,
                    device_memory_total_bytes: null
                },
                facts_error: "the model file's header could not be read: the file is gone"
            }
        });
    });

    it("lists OpenAI's four fields alone where the server reads no facts", async () => {
        expect(await describeServedModel("gemma", info, undefined)).toEqual({
            id: "gemma",
            object: "model",
            created: 0,
            owned_by: "kvault"
        });
    });
});
