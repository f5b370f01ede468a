import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { backendUrls } from "../../../../host/backends/BackendConfig.js";
import { Backends } from "../../../../host/backends/Backends.js";
import { backendGateway } from "../../../../host/http/gateway/serveGateway.js";
import type { EngineInfo } from "../../../../contract/engineProtocol.js";
import type { ModelFacts } from "../../../../contract/models.js";
import { EngineStartError } from "../../../../host/supervisor/engineHostErrors.js";
import type { EngineHealth } from "../../../../host/http/KvaultHttpServer.js";
import type { EngineClient } from "../../../../contract/engineProtocol.js";
import { LocalApiController, LocalApiStartError, type LocalApiTarget } from "../../../../main/localApi/LocalApiController.js";
import { freePort, occupy } from "../loopbackPorts.js";

const apiKey = "kv-test-key-0001";
const engine = { info: { modelName: "tiny" } as EngineInfo } as EngineClient;
const target = async (): Promise<LocalApiTarget> => ({ engine, modelId: () => "tiny" });
const log = (): void => undefined;

async function models(url: string, key = apiKey): Promise<Response> {
    return fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
}

const controllers: LocalApiController[] = [];
function controller(from: () => Promise<LocalApiTarget> = target): LocalApiController {
    const created = new LocalApiController(from, log);
    controllers.push(created);
    return created;
}

afterEach(async () => {
    await Promise.all(controllers.splice(0).map((created) => created.close()));
});

describe("LocalApiController", () => {
    it("serves the API on 127.0.0.1 with the key when enabled, and stops when disabled", async () => {
        const port = await freePort();
        const api = controller();
        await api.apply({ enabled: true, port, apiKey });
        expect(api.status).toEqual({ url: `http://127.0.0.1:${port}`, problem: null });
        const response = await models(api.status.url!);
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ data: [{ id: "tiny" }] });
        expect((await models(api.status.url!, "kv-wrong-key-0000")).status).toBe(401);

        await api.apply({ enabled: false, port, apiKey });
        expect(api.status).toEqual({ url: null, problem: null });
        await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    });

    it("moves to a new port, and keeps running when nothing changed", async () => {
        const [first, second] = [await freePort(), await freePort()];
        const api = controller();
        await api.apply({ enabled: true, port: first, apiKey });
        const url = api.status.url;
        await api.apply({ enabled: true, port: first, apiKey });
        expect(api.status.url).toBe(url);
        await api.apply({ enabled: true, port: second, apiKey });
        expect(api.status.url).toBe(`http://127.0.0.1:${second}`);
        expect((await models(api.status.url!)).status).toBe(200);
        await expect(fetch(`http://127.0.0.1:${first}/health`)).rejects.toThrow();
    });

    it("reports a port in use as local_api_start_failed, with what to do", async () => {
        const port = await freePort();
        const other = await occupy(port);
        try {
            const api = controller();
            const failure = api.apply({ enabled: true, port, apiKey });
            await expect(failure).rejects.toBeInstanceOf(LocalApiStartError);
            await expect(failure).rejects.toThrow(`Port ${port} is in use by another program`);
            expect(api.status).toEqual({
                url: null,
                problem: { code: "local_api_start_failed", message: expect.stringMatching(/Choose another port/) }
            });
        } finally {
            await new Promise((resolve) => other.close(resolve));
        }
    });

    it("lists the model loaded now, and /health says when the engine is down and why", async () => {
        let modelId = "tiny";
        let health: EngineHealth = { state: "ready", reason: "Engine process 7 answers its liveness pings and runs no turn." };
        const api = controller(async () => ({ engine, modelId: () => modelId, health: () => health }));
        await api.apply({ enabled: true, port: await freePort(), apiKey });
        const url = api.status.url!;
        expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: "ok", ...health });

        modelId = "llama-3.2-1b-q4"; // the supervisor switched models
        expect(await (await models(url)).json()).toMatchObject({ data: [{ id: "llama-3.2-1b-q4" }] });

        const error = { code: "engine_unavailable", message: "The engine process stopped again after 5 restarts." };
        health = { state: "failed", reason: error.message, error };
        const down = await fetch(`${url}/health`);
        expect(down.status).toBe(503);
        expect(await down.json()).toEqual({ status: "failed", ...health });
    });

    it("cannot serve an engine that failed to start, and says why", async () => {
        const api = controller(() => Promise.reject(new EngineStartError("The engine could not start: bad model.")));
        await expect(api.apply({ enabled: true, port: await freePort(), apiKey })).rejects.toMatchObject({ code: "engine_start_failed" });
        expect(api.status.problem).toEqual({ code: "engine_start_failed", message: "The engine could not start: bad model." });
    });

    it("lists the model's facts when the target gives them, as the headless server does", async () => {
        const info = {
            modelName: "Llama 3.1 8B",
            modelPath: "/m/llama.gguf",
            backend: "cpu",
            compute: { backend: "cpu", binary: "local build", devices: [], layers: { numOnDevice: 0, numTotal: 33, numPlanned: 0 } },
            mode: { requested: "split", effective: "split" },
            window: { configured: 4096, limit: 4096, boundBy: "configured", clamped: false },
            numDecodeSequences: 4,
            pageTokens: 256,
            numPages: 80,
            pageBytes: 256 * 131_072,
            kvCacheType: "f16"
        } as unknown as EngineInfo;
        const facts = {
            path: "/m/llama.gguf",
            fileName: "llama.gguf",
            fileBytes: 4_920_000_000,
            name: "Llama 3.1 8B",
            architecture: "llama",
            parameterCount: 8_030_000_000,
            fileType: "MOSTLY_Q4_K_M",
            trainContextSize: 131_072,
            numLayers: 32,
            kvBytesPerToken: 131_072,
            kvBytesPerTokenByType: { f16: 131_072, q8_0: 69_632, q4_0: 36_864 },
            heads: { numHeads: 32, numKvHeads: 8, kHeadSize: 128, vHeadSize: 128 },
            machineRamBytes: 16 * 1024 ** 3,
            memory: { plainKvCache: true }
        } as ModelFacts;
        const asked: string[] = [];
        const api = controller(async () => ({
            engine: { info } as EngineClient,
            modelId: () => "llama",
            modelFacts: async (modelPath) => {
                asked.push(modelPath);
                return facts;
            }
        }));
        await api.apply({ enabled: true, port: await freePort(), apiKey });
        const listed = (await (await models(api.status.url!)).json()) as { data: { id: string; kvault: Record<string, unknown> }[] };
        expect(listed.data[0]).toMatchObject({
            id: "llama",
            kvault: { architecture: "llama", quantization: "MOSTLY_Q4_K_M", layers: 32, mode: "split", paged: true }
        });
        expect(asked).toEqual(["/m/llama.gguf"]);
    });

    it("lists the settings' backends' models and forwards a request for one, as the headless server does", async () => {
        // a backend on loopback that lists one model and answers a chat completion
        const backend = http.createServer((request, response) => {
            response.setHeader("content-type", "application/json");
            if (request.url === "/v1/models") {
                response.end(JSON.stringify({ object: "list", data: [{ id: "m1", object: "model", max_model_len: 2048 }] }));
                return;
            }
            request.resume();
            request.on("end", () =>
                response.end(
                    JSON.stringify({
                        id: "c-1",
                        object: "chat.completion",
                        created: 0,
                        model: "m1",
                        choices: [{ index: 0, message: { role: "assistant", content: "From the backend." }, finish_reason: "stop" }],
                        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }
                    })
                )
            );
        });
        await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
        try {
            const urls = backendUrls(`http://127.0.0.1:${(backend.address() as AddressInfo).port}`);
            if (!urls.ok) {
                throw new Error(urls.reason);
            }
            const backends = new Backends([{ name: "lab", apiBase: urls.apiBase, root: urls.root, remote: false }]);
            const api = controller(async () => ({ engine, modelId: () => "tiny", gateway: backendGateway(backends) }));
            await api.apply({ enabled: true, port: await freePort(), apiKey });
            const listed = (await (await models(api.status.url!)).json()) as { data: { id: string; max_model_len?: number }[] };
            expect(listed.data.map((entry) => [entry.id, entry.max_model_len])).toEqual([
                ["tiny", undefined],
                ["lab/m1", 2048]
            ]);
            const answer = await fetch(`${api.status.url}/v1/chat/completions`, {
                method: "POST",
                headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
                body: JSON.stringify({ model: "lab/m1", messages: [{ role: "user", content: "Hi" }] })
            });
            expect(answer.status).toBe(200);
            expect(await answer.json()).toMatchObject({ model: "lab/m1", choices: [{ message: { content: "From the backend." } }] });
        } finally {
            backend.closeAllConnections();
            await new Promise((resolve) => backend.close(resolve));
        }
    });
});
