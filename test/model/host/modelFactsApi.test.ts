import os from "node:os";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPresets } from "../../../synthetic/model/modelPresets.js";
import { httpDefaults } from "../../../host/http/KvaultHttpServer.js";
import { parameterSize } from "../../../host/http/ollama/ollamaModel.js";
import { inspectModelFile } from "../../../host/models/inspectModelFile.js";
import { modelFactsCache } from "../../../host/models/modelFactsCache.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "test-key-0123456789";
const tiny = modelPresets.tiny;

/** The tiny model in a Q8_0 KV cache: 2 layers × (K + V) × 2 KV heads × 32 values, in 34-byte blocks of 32. */
const Q8_BYTES_PER_TOKEN = tiny.numLayers * 2 * 2 * 34;

describe("/v1/models and /v1/models/{id} report the loaded model's facts, through real HTTP", () => {
    let api: InProcessApiServer;
    let url: string;
    const inspected: string[] = [];
    const get = (pathname: string): Promise<Response> => fetch(url + pathname, { headers: { Authorization: `Bearer ${API_KEY}` } });

    beforeAll(async () => {
        const facts = modelFactsCache(
            (modelPath, estimateFor) => {
                inspected.push(modelPath);
                return inspectModelFile(modelPath, estimateFor);
            },
            { contextSize: 256, sequences: 2 }
        );
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, kvCacheType: "q8_0", gpu: false },
            server: { modelFacts: facts, kvaultVersion: "9.8.7", requestTimeoutMs: httpDefaults.requestTimeoutMs }
        });
        url = api.url;
    });
    afterAll(async () => {
        await api?.close();
    });

    it("gives the architecture, quantisation, parameters, layers, heads, head sizes, windows, the KV type's bytes and memory", async () => {
        const response = await get("/v1/models/tiny");
        expect(response.status).toBe(200);
        const entry = (await response.json()) as { kvault: Record<string, unknown> };
        expect(entry).toMatchObject({
            id: "tiny",
            object: "model",
            owned_by: "kvault",
            max_model_len: 256,
            kvault: {
                mode: "split",
                paged: true,
                kv_cache_type: "q8_0",
                kv_bytes_per_token: Q8_BYTES_PER_TOKEN,
                page_tokens: 16,
                pool_pages: 48,
                pool_bytes: 48 * 16 * Q8_BYTES_PER_TOKEN,
                decode_sequences: 2,
                name: "Kvault synthetic tiny",
                architecture: "llama",
                quantization: "MOSTLY_F16",
                parameters: expect.any(Number),
                layers: tiny.numLayers,
                heads: { q: tiny.numHeads, kv: tiny.numKvHeads },
                head_size: { k: 32, v: 32 },
                context_window: tiny.contextLength,
                sliding_window: null,
                kv_bytes_per_token_by_type: {
                    f16: tiny.numLayers * 2 * 2 * 32 * 2,
                    q8_0: Q8_BYTES_PER_TOKEN,
                    q4_0: tiny.numLayers * 2 * 2 * 18
                },
                file_paged: true,
                memory: {
                    machine_ram_bytes: os.totalmem(),
                    kv_cache_bytes: Q8_BYTES_PER_TOKEN * 256 * 2,
                    cpu_ram_bytes: expect.any(Number),
                    fits_cpu_ram: true
                }
            }
        });
        expect(entry.kvault.parameters).toBeGreaterThan(100_000);
        expect(entry.kvault).not.toHaveProperty("facts_error");
    });

    it("lists the same entry, reads the header once, and answers an unknown id with OpenAI's 404", async () => {
        const one = await (await get("/v1/models/tiny")).json();
        const list = await (await get("/v1/models")).json();
        expect(list).toEqual({ object: "list", data: [one] });
        expect(inspected).toEqual([generatedModelPath("tiny")]);

        const unknown = await get("/v1/models/gpt-9");
        expect(unknown.status).toBe(404);
        expect(await unknown.json()).toMatchObject({ error: { type: "not_found_error", code: "model_not_found", param: "model" } });
    });

    it("is what the official openai client reads", async () => {
        const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY, maxRetries: 0 });
        const model = (await client.models.retrieve("tiny")) as OpenAI.Model & { max_model_len?: number };
        expect(model.id).toBe("tiny");
        expect(model.max_model_len).toBe(256);
        const page = await client.models.list();
        expect(page.data.map((entry) => entry.id)).toEqual(["tiny"]);
    });

    it("gives Ollama's details from the same facts, and Kvault's version beside the Ollama API's", async () => {
        const ollama = new Ollama({ host: url, headers: { Authorization: `Bearer ${API_KEY}` } });
        const { models } = await ollama.list();
        const entry = (await (await get("/v1/models/tiny")).json()) as { kvault: { parameters: number } };
        expect(models[0]!.details).toMatchObject({ family: "llama", families: ["llama"], quantization_level: "F16" });
        expect(models[0]!.details.parameter_size).toBe(parameterSize(entry.kvault.parameters));
        expect((await ollama.show({ model: "tiny" })).details.family).toBe("llama");
        const version = (await (await get("/api/version")).json()) as { version: string; kvault_version?: string };
        expect(version.version).toMatch(/^\d+\.\d+\.\d+$/);
        expect(version.kvault_version).toBe("9.8.7");
    });
});
