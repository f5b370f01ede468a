import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendUrls } from "../../../../host/backends/BackendConfig.js";
import { measureRemote, readPrometheus } from "../../../../host/backends/remoteMeters.js";
import { RemoteBackend } from "../../../../host/backends/RemoteBackend.js";

// The meters against servers in the documented shapes of vLLM (its /tokenize takes messages; its
// gauge is vllm:kv_cache_usage_perc), SGLang (context_length, sglang:token_usage) and a server
// with neither (Ollama's /v1, most cloud providers), served for real on loopback. llama-server and
// Kvault are measured for real in test/model/backends/remoteWorkspaces.test.ts.
type Routes = Record<string, (body: Record<string, unknown>) => [number, string]>;

let routes: Routes = {};
let server: http.Server;
let backend: RemoteBackend;
const asked: string[] = [];

beforeAll(async () => {
    server = http.createServer((request, response) => {
        let body = "";
        request.on("data", (chunk: Buffer) => void (body += chunk.toString()));
        request.on("end", () => {
            const route = `${request.method} ${request.url}`;
            asked.push(route);
            const [status, text] = routes[route]?.(body === "" ? {} : (JSON.parse(body) as Record<string, unknown>)) ?? [
                404,
                '{"detail":"Not Found"}'
            ];
            response.writeHead(status, { "content-type": "application/json" });
            response.end(text);
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const urls = backendUrls(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    if (!urls.ok) {
        throw new Error(urls.reason);
    }
    backend = new RemoteBackend({ name: "gpu", apiBase: urls.apiBase, root: urls.root, remote: false });
});

afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
});

const conversation = [{ role: "user" as const, content: "Hi" }];

describe("measureRemote", () => {
    it("vLLM's shape: counts from /tokenize with the messages, the window from max_model_len, KV from vllm:kv_cache_usage_perc", async () => {
        routes = {
            "GET /v1/models": () => [200, JSON.stringify({ data: [{ id: "m", max_model_len: 32_768 }] })],
            "POST /tokenize": (body) => {
                expect(body).toMatchObject({ model: "m", add_generation_prompt: true });
                return [200, JSON.stringify({ count: 10 * (body.messages as unknown[]).length, max_model_len: 32_768, tokens: [] })];
            },
            "GET /metrics": () => [
                200,
                '# HELP x\nvllm:kv_cache_usage_perc{model_name="m"} 0.25\nvllm:num_requests_running{model_name="m"} 1\n'
            ]
        };
        expect(await measureRemote(backend, "m", "ui-a", conversation, "more")).toEqual({
            workspace: "ui-a",
            backend: "gpu",
            model: "m",
            tokens: { kind: "known", source: "vLLM /tokenize (messages)", usedTokens: 10, draftTokens: 10 },
            window: { kind: "known", source: "/v1/models max_model_len", tokens: 32_768 },
            kvUsage: { kind: "known", source: "vLLM /metrics vllm:kv_cache_usage_perc", ratio: 0.25 }
        });
        expect(asked).toContain("POST /apply-template"); // llama.cpp's first, refused with 404, then vLLM's
    });

    it("SGLang's shape: the window from context_length, KV from sglang:token_usage", async () => {
        routes = {
            "GET /v1/models": () => [200, JSON.stringify({ data: [{ id: "m", context_length: 4_096 }] })],
            "GET /metrics": () => [200, 'sglang:token_usage{model_name="m"} 0.5\n']
        };
        const measured = await measureRemote(backend, "m", "ui-a", [], "Hi");
        expect(measured.window).toEqual({ kind: "known", source: "/v1/models context_length", tokens: 4_096 });
        expect(measured.kvUsage).toEqual({ kind: "known", source: "SGLang /metrics sglang:token_usage", ratio: 0.5 });
        expect(measured.tokens).toMatchObject({
            kind: "unknown",
            reason: expect.stringContaining("has no tokenizer endpoint Kvault knows")
        });
    });

    it("a server that exposes none of them: every figure says so, none is guessed", async () => {
        routes = { "GET /v1/models": () => [200, JSON.stringify({ data: [{ id: "m" }] })] };
        const measured = await measureRemote(backend, "m", "ui-a", conversation, "x");
        expect(measured.tokens.kind).toBe("unknown");
        expect(measured.window).toEqual({
            kind: "unknown",
            reason: 'Backend "gpu" states no window for "m" (neither /v1/models max_model_len, context_length or meta.n_ctx, nor /props n_ctx).'
        });
        expect(measured.kvUsage).toEqual({
            kind: "unknown",
            reason: 'Backend "gpu" serves no Prometheus /metrics (404); llama-server needs --metrics.'
        });
    });

    it("a server that fails says why in the figure, not as a crash", async () => {
        routes = {
            "GET /v1/models": () => [500, '{"error":{"message":"down for maintenance"}}'],
            "POST /apply-template": () => [200, "not json"],
            "GET /metrics": () => [200, 'kvault_pages{state="free"} 3\nkvault_pages{state="sealed"} 1\n']
        };
        const measured = await measureRemote(backend, "m", "ui-a", conversation, "x");
        expect(measured.window).toMatchObject({ kind: "unknown", reason: expect.stringContaining("answered 500 to GET") });
        expect(measured.tokens).toMatchObject({ kind: "unknown", reason: expect.stringContaining("that is not JSON") });
        expect(measured.kvUsage).toEqual({ kind: "known", source: "Kvault /metrics kvault_pages (the host page pool)", ratio: 0.25 });
    });
});

describe("readPrometheus", () => {
    it("reads samples with and without labels, skipping comments and lines that are not samples", () => {
        const samples = readPrometheus('# TYPE a gauge\na 1\nb{x="1",y="2"} 2.5e-1\nbroken line\nc NaN\n');
        expect([...samples.entries()]).toEqual([
            ["a", [{ labels: "", value: 1 }]],
            ["b", [{ labels: '{x="1",y="2"}', value: 0.25 }]]
        ]);
    });
});
