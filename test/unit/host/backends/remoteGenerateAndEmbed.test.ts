import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatTurnRequest } from "../../../../contract/engineProtocol.js";
import { backendUrls, type BackendConfig } from "../../../../host/backends/BackendConfig.js";
import { backendLimits, BackendMalformedError } from "../../../../host/backends/backendErrors.js";
import { RemoteBackend } from "../../../../host/backends/RemoteBackend.js";
import { TurnEventLog } from "../../../support/TurnEventLog.js";

// RemoteBackend.generate (a raw prompt through `/v1/completions`) and RemoteBackend.embed
// (`/v1/embeddings`) against a real HTTP server on loopback that answers as each test scripts it.
type Script = (response: http.ServerResponse) => void;

let script: Script = (response) => response.end();
let sent: { url: string; body: Record<string, unknown> }[] = [];
let server: http.Server;
let config: BackendConfig;

beforeAll(async () => {
    server = http.createServer((request, response) => {
        let body = "";
        request.on("data", (chunk: Buffer) => void (body += chunk.toString()));
        request.on("end", () => {
            sent.push({ url: request.url ?? "", body: JSON.parse(body) as Record<string, unknown> });
            script(response);
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const urls = backendUrls(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    if (!urls.ok) {
        throw new Error(urls.reason);
    }
    config = { name: "test", apiBase: urls.apiBase, root: urls.root, remote: false };
});

afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
});

const backend = (): RemoteBackend => new RemoteBackend(config, { ...backendLimits, headersTimeoutMs: 1_000, idleTimeoutMs: 1_000 });
const sse = (response: http.ServerResponse, ...events: unknown[]): void => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(events.map((event) => `data: ${typeof event === "string" ? event : JSON.stringify(event)}\n\n`).join(""));
};
const rawTurn = (prompt: ChatTurnRequest["prompt"]): ChatTurnRequest => ({
    requestId: "r-1",
    workspace: "w",
    messages: [],
    ...(prompt === undefined ? {} : { prompt }),
    sampling: { temperature: 0, maxTokens: 4, topK: 40 }
});

describe("RemoteBackend.generate", () => {
    it("streams a raw prompt's text through /v1/completions with the sampling, and keeps the usage it reports", async () => {
        sent = [];
        script = (response) =>
            sse(
                response,
                { object: "text_completion", choices: [{ text: "Once", finish_reason: null }] },
                { object: "text_completion", choices: [{ text: " more", finish_reason: "length" }] },
                { choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } },
                "[DONE]"
            );
        const heard = new TurnEventLog();
        const result = await backend().generate("m", rawTurn({ text: "Tell" }), heard.listener());
        expect(result).toEqual({
            text: "Once more",
            finishReason: "length",
            usage: { promptTokens: 3, cachedPromptTokens: 0, evaluatedPromptTokens: 3, completionTokens: 2 }
        });
        expect(heard.lines).toEqual(["started", "text Once", "text  more"]);
        expect(heard.requestIds).toEqual(["r-1"]);
        expect(sent).toEqual([
            {
                url: "/v1/completions",
                body: {
                    model: "m",
                    prompt: "Tell",
                    stream: true,
                    stream_options: { include_usage: true },
                    temperature: 0,
                    max_tokens: 4,
                    top_k: 40
                }
            }
        ]);
    });

    it("sends token ids as the prompt and the workspace as `user`, and refuses a stream without a finish reason", async () => {
        sent = [];
        script = (response) => sse(response, { choices: [{ text: "x", finish_reason: null }] }, "[DONE]");
        await expect(backend().generate("m", rawTurn({ tokens: [1, 2] }), undefined, undefined, "key7:notes")).rejects.toThrow(
            BackendMalformedError
        );
        expect(sent[0]!.body).toMatchObject({ prompt: [1, 2], user: "key7:notes" });
    });

    it("refuses a grammar before anything is sent", async () => {
        sent = [];
        const turn = { ...rawTurn({ text: "x" }), sampling: { temperature: 0, maxTokens: 4, grammar: { kind: "json" as const } } };
        await expect(backend().generate("m", turn)).rejects.toThrow(
            /A grammar or log probabilities are not sent to backend "test" with a raw prompt/
        );
        expect(sent).toEqual([]);
    });
});

describe("RemoteBackend.embed", () => {
    it("asks /v1/embeddings for floats and gives each input's vector in order, with the prompt tokens", async () => {
        sent = [];
        script = (response) => {
            response.writeHead(200, { "content-type": "application/json" });
            response.end(
                JSON.stringify({
                    data: [
                        { index: 1, embedding: [3, 4] },
                        { index: 0, embedding: [1, 2] }
                    ],
                    usage: { prompt_tokens: 6, total_tokens: 6 }
                })
            );
        };
        expect(await backend().embed("e", ["a", [5, 6]])).toEqual({
            embeddings: [
                [1, 2],
                [3, 4]
            ],
            promptTokens: 6
        });
        expect(sent).toEqual([{ url: "/v1/embeddings", body: { model: "e", input: ["a", [5, 6]], encoding_format: "float" } }]);
    });

    it("refuses an answer with another count of vectors than inputs", async () => {
        script = (response) => {
            response.writeHead(200, { "content-type": "application/json" });
            response.end(JSON.stringify({ data: [{ embedding: [1] }] }));
        };
        await expect(backend().embed("e", ["a", "b"])).rejects.toThrow(
            'Backend "test" sent 1 embedding vectors for 2 inputs; Kvault cannot tell which is whose.'
        );
    });
});
