import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendUrls, type BackendConfig } from "../../../../host/backends/BackendConfig.js";
import {
    BackendAnswerError,
    backendLimits,
    BackendMalformedError,
    BackendOversizeError,
    BackendStatusError,
    BackendTimeoutError,
    BackendUnreachableError
} from "../../../../host/backends/backendErrors.js";
import { RemoteBackend } from "../../../../host/backends/RemoteBackend.js";
import type { ChatTurnRequest } from "../../../../contract/engineProtocol.js";
import { freePort } from "../../main/loopbackPorts.js";
import { TurnEventLog } from "../../../support/TurnEventLog.js";

// RemoteBackend against a real HTTP server on loopback that answers as each test scripts it:
// every bad byte a backend can send is a named error, never a crash or a cut answer taken whole.
type Script = (request: http.IncomingMessage, response: http.ServerResponse, body: string) => void;

let script: Script = (_request, response) => response.end();
let server: http.Server;
let config: BackendConfig;
const closed: string[] = [];

const small = {
    ...backendLimits,
    maxBodyBytes: 4_096,
    maxEventBytes: 1_024,
    maxAnswerChars: 2_000,
    headersTimeoutMs: 300,
    idleTimeoutMs: 300
};
const turn: ChatTurnRequest = {
    requestId: "r-1",
    workspace: "w",
    messages: [{ role: "user", content: "Hi" }],
    sampling: { temperature: 0, maxTokens: 8, topK: 40, stop: ["\n"] }
};

beforeAll(async () => {
    server = http.createServer((request, response) => {
        let body = "";
        request.on("data", (chunk: Buffer) => void (body += chunk.toString()));
        request.on("end", () => script(request, response, body));
        response.on("close", () => void closed.push(request.url ?? ""));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const urls = backendUrls(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    if (!urls.ok) {
        throw new Error(urls.reason);
    }
    config = { name: "test", apiBase: urls.apiBase, root: urls.root, keyEnv: "TEST_KEY", key: "sekrit", remote: false };
});

afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
});

const backend = (): RemoteBackend => new RemoteBackend(config, small);
const sse = (response: http.ServerResponse, ...events: string[]): void => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(events.map((event) => `data: ${event}\n\n`).join(""));
};
const chunk = (content: string | null, finish: string | null = null): string =>
    JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: finish }] });

describe("RemoteBackend.chat", () => {
    it("streams text, its finish reason and the usage the backend reports, sending the workspace's sampling", async () => {
        let sent: Record<string, unknown> = {};
        let authorization: string | undefined;
        script = (request, response, body) => {
            sent = JSON.parse(body) as Record<string, unknown>;
            authorization = request.headers.authorization;
            response.writeHead(200, { "content-type": "text/event-stream" });
            // CRLF lines, a comment and a data field split over two lines, as the SSE standard allows
            response.end(
                `: keep-alive\r\n\r\ndata: ${chunk("Hel")}\r\n\r\ndata: ${chunk("lo")}\n\n` +
                    `data: ${chunk(null, "length")}\n\ndata: {"choices":[],\ndata: "usage":{"prompt_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}\n\ndata: [DONE]\n\n`
            );
        };
        const heard = new TurnEventLog();
        const result = await backend().chat("m", turn, heard.listener());
        expect(result).toEqual({
            text: "Hello",
            finishReason: "length",
            usage: { promptTokens: 9, cachedPromptTokens: 4, evaluatedPromptTokens: 5, completionTokens: 2 }
        });
        expect(heard.lines).toEqual(["started", "text Hel", "text lo"]);
        expect(heard.requestIds).toEqual(["r-1"]);
        expect(authorization).toBe("Bearer sekrit");
        expect(sent).toEqual({
            model: "m",
            messages: [{ role: "user", content: "Hi" }],
            stream: true,
            stream_options: { include_usage: true },
            temperature: 0,
            max_tokens: 8,
            top_k: 40,
            stop: ["\n"]
        });
    });

    it.each<[string, Script, new (...args: never[]) => Error, RegExp]>([
        [
            "a 500 with OpenAI's error body",
            (_q, response) => {
                response.writeHead(500, { "content-type": "application/json" });
                response.end(JSON.stringify({ error: { message: "out of memory" } }));
            },
            BackendStatusError,
            /Backend "test" answered 500 to POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: out of memory/
        ],
        [
            "a 401",
            (_q, response) => {
                response.writeHead(401);
                response.end("no");
            },
            BackendStatusError,
            /answered 401.*Check the key in \$TEST_KEY/
        ],
        ["a chunk that is not JSON", (_q, response) => sse(response, "{nope"), BackendMalformedError, /not JSON \(starting "\{nope"\)/],
        [
            "a chunk whose content is not a string",
            (_q, response) => sse(response, JSON.stringify({ choices: [{ delta: { content: 7 } }] })),
            BackendMalformedError,
            /choices\[0\]\.delta\.content is not a string/
        ],
        ["a chunk without choices", (_q, response) => sse(response, "{}"), BackendMalformedError, /has no choices list/],
        [
            "bytes that are not UTF-8",
            (_q, response) => {
                response.writeHead(200, { "content-type": "text/event-stream" });
                response.end(Buffer.from([0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xff, 0xfe, 0x0a, 0x0a]));
            },
            BackendMalformedError,
            /not UTF-8/
        ],
        [
            "an event over the limit",
            (_q, response) => sse(response, chunk("x".repeat(2_000))),
            BackendOversizeError,
            /an event of more than 1,024 characters/
        ],
        [
            "an answer over the limit",
            (_q, response) => sse(response, ...Array.from({ length: 5 }, () => chunk("y".repeat(500))), chunk(null, "stop")),
            BackendOversizeError,
            /an answer of more than 2,000 characters/
        ],
        [
            "a stream that ends without a finish reason",
            (_q, response) => sse(response, chunk("half"), "[DONE]"),
            BackendMalformedError,
            /without a finish reason, after 4 characters: the answer may be cut short/
        ],
        [
            "an error event mid-answer",
            (_q, response) => sse(response, chunk("so"), JSON.stringify({ error: { message: "slot crashed" } })),
            BackendAnswerError,
            /ended the answer with an error: slot crashed/
        ],
        [
            "a stream that stalls",
            (_q, response) => {
                response.writeHead(200, { "content-type": "text/event-stream" });
                response.write(`data: ${chunk("wait")}\n\n`);
            },
            BackendTimeoutError,
            /sent nothing for 300 ms in the middle of an answer/
        ],
        ["no response headers in time", () => undefined, BackendTimeoutError, /sent no response headers to POST .* within 300 ms/]
    ])("%s is a named error that says so", async (_name, answer, type, message) => {
        script = answer;
        const error = await backend()
            .chat("m", turn)
            .then(
                () => undefined,
                (failure: unknown) => failure
            );
        expect(error).toBeInstanceOf(type);
        expect((error as Error).message).toMatch(message);
        expect((error as { code: string }).code).toMatch(/^backend_/);
    });

    it("an unreachable backend is BackendUnreachableError naming the URL", async () => {
        const port = await freePort();
        const gone = new RemoteBackend({ ...config, apiBase: `http://127.0.0.1:${port}/v1`, root: `http://127.0.0.1:${port}` }, small);
        await expect(gone.chat("m", turn)).rejects.toThrow(BackendUnreachableError);
        await expect(gone.chat("m", turn)).rejects.toThrow(
            `could not be reached at http://127.0.0.1:${port}/v1/chat/completions: ECONNREFUSED`
        );
    });

    it("aborting the turn closes the request upstream", async () => {
        script = (request, response) => {
            response.writeHead(200, { "content-type": "text/event-stream" });
            response.write(`data: ${chunk("a")}\n\n`);
        };
        const controller = new AbortController();
        const running = backend().chat(
            "m",
            { ...turn, requestId: "abort" },
            (event) => {
                if (event.type === "text") {
                    controller.abort(new Error("stopped"));
                }
            },
            controller.signal
        );
        await expect(running).rejects.toThrow("stopped");
        for (let tries = 0; tries < 100 && !closed.includes("/v1/chat/completions"); tries++) {
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(closed).toContain("/v1/chat/completions");
    });

    it("refuses what a workspace cannot send to a backend, and a model other than the one configured", async () => {
        await expect(backend().chat("m", { ...turn, prompt: { text: "raw" } })).rejects.toThrow(
            /A raw prompt .* is not sent to backend "test"/
        );
        const pinned = new RemoteBackend({ ...config, model: "only" }, small);
        await expect(pinned.chat("other", turn)).rejects.toThrow(/offers the model "only" only/);
    });
});

describe("RemoteBackend.models", () => {
    it("reads each id with the window the backend states (vLLM, SGLang, llama-server), the configured model alone when there is one", async () => {
        script = (_q, response) =>
            response.end(
                JSON.stringify({
                    data: [
                        { id: "v", max_model_len: 8192 },
                        { id: "s", context_length: 4096 },
                        { id: "l", meta: { n_ctx: 512 } },
                        { id: "o" }
                    ]
                })
            );
        expect(await backend().models()).toEqual([
            { id: "v", window: { tokens: 8192, source: "/v1/models max_model_len" } },
            { id: "s", window: { tokens: 4096, source: "/v1/models context_length" } },
            { id: "l", window: { tokens: 512, source: "/v1/models meta.n_ctx (per slot)" } },
            { id: "o" }
        ]);
        expect(await new RemoteBackend({ ...config, model: "s" }, small).models()).toEqual([
            { id: "s", window: { tokens: 4096, source: "/v1/models context_length" } }
        ]);
    });

    it.each<[string, Script, new (...args: never[]) => Error, RegExp]>([
        ["a body over the limit", (_q, response) => response.end("x".repeat(5_000)), BackendOversizeError, /more than 4,096 bytes/],
        ["a body that is not JSON", (_q, response) => response.end("<html>"), BackendMalformedError, /not JSON/],
        ["a list without data", (_q, response) => response.end("{}"), BackendMalformedError, /has no data list/],
        ["an entry without an id", (_q, response) => response.end('{"data":[{}]}'), BackendMalformedError, /data\[0\] has no id/]
    ])("%s is a named error", async (_name, answer, type, message) => {
        script = answer;
        await expect(backend().models()).rejects.toThrow(type);
        await expect(backend().models()).rejects.toThrow(message);
    });
});
