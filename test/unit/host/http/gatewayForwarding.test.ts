import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendUrls } from "../../../../host/backends/BackendConfig.js";
import { Backends } from "../../../../host/backends/Backends.js";
import type { ApiContext } from "../../../../host/http/ApiContext.js";
import { backendGateway, type ForwardedEndpoint } from "../../../../host/http/gateway/serveGateway.js";
import { sendError } from "../../../../host/http/httpResponses.js";
import { OpenAiError } from "../../../../host/http/OpenAiError.js";

// The gateway's one forwarder for /v1/completions and /v1/embeddings, over real HTTP on loopback
// on both sides: a backend that answers as each test scripts it (answers no real server sends,
// which test/model/backends/gatewayEndpoints.test.ts cannot provoke), and a server that offers
// each request to the gateway as KvaultHttpServer does. The engine is not part of this path.
type Script = (request: http.IncomingMessage, response: http.ServerResponse, body: string) => void;

let script: Script = (_request, response) => response.end();
let sent: { url: string; body: Record<string, unknown> }[] = [];
let backendServer: http.Server;
let gatewayServer: http.Server;
let gatewayUrl: string;
let numAdmitted = 0;

const listen = async (server: http.Server): Promise<string> => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const readAll = (request: http.IncomingMessage): Promise<string> =>
    new Promise((resolve) => {
        let body = "";
        request.on("data", (chunk: Buffer) => void (body += chunk.toString()));
        request.on("end", () => resolve(body));
    });

beforeAll(async () => {
    backendServer = http.createServer((request, response) => {
        void readAll(request).then((body) => {
            sent.push({ url: request.url ?? "", body: JSON.parse(body) as Record<string, unknown> });
            script(request, response, body);
        });
    });
    const urls = backendUrls(await listen(backendServer));
    if (!urls.ok) {
        throw new Error(urls.reason);
    }
    const gateway = backendGateway(new Backends([{ name: "gpu", apiBase: urls.apiBase, root: urls.root, remote: false }]));
    const context = {
        requestTimeoutMs: 10_000,
        admit: () => {
            numAdmitted++;
            return () => void numAdmitted--;
        }
    } as unknown as ApiContext;
    gatewayServer = http.createServer((request, response) => {
        void readAll(request).then(async (text) => {
            try {
                const endpoint = (request.url ?? "").replace(/^\/v1/, "") as ForwardedEndpoint;
                if (!(await gateway.forward(endpoint, context, JSON.parse(text), request, response, "key7"))) {
                    sendError(response, new OpenAiError(404, "not a backend's model", "not_found_error", "model_not_found"));
                }
            } catch (error) {
                sendError(response, error as OpenAiError);
            }
        });
    });
    gatewayUrl = await listen(gatewayServer);
});

afterAll(async () => {
    for (const server of [gatewayServer, backendServer]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
    }
});

const json = (response: http.ServerResponse, value: unknown, status = 200): void => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(value));
};
const sse = (response: http.ServerResponse, ...events: unknown[]): void => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(events.map((event) => `data: ${typeof event === "string" ? event : JSON.stringify(event)}\n\n`).join(""));
};
const ask = async (endpoint: string, body: Record<string, unknown>): Promise<{ status: number; text: string }> => {
    sent = [];
    const response = await fetch(`${gatewayUrl}/v1${endpoint}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-kvault-workspace": "notes" },
        body: JSON.stringify(body)
    });
    return { status: response.status, text: await response.text() };
};

describe("the gateway's forwarder for /v1/completions", () => {
    it("sends the body as the client sent it, with the backend's model id and the workspace in the key's namespace; the model comes back as asked", async () => {
        script = (_request, response) =>
            json(response, { object: "text_completion", model: "m", choices: [{ text: "Once", index: 0, finish_reason: "length" }] });
        const answer = await ask("/completions", { model: "gpu/m", prompt: "Hi", max_tokens: 1, top_k: 1 });
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.text)).toMatchObject({ model: "gpu/m", choices: [{ text: "Once" }] });
        expect(sent).toEqual([{ url: "/v1/completions", body: { model: "m", prompt: "Hi", max_tokens: 1, top_k: 1, user: "key7:notes" } }]);
        expect(numAdmitted).toBe(0);
    });

    it("streams the backend's chunks with the model as asked, then [DONE]", async () => {
        script = (_request, response) =>
            sse(
                response,
                { model: "m", choices: [{ text: "On", finish_reason: null }] },
                { model: "m", choices: [{ text: "ce", finish_reason: "stop" }] },
                "[DONE]"
            );
        const answer = await ask("/completions", { model: "gpu/m", prompt: "Hi", stream: true });
        const events = answer.text.split("\n\n").filter(Boolean);
        expect(events.at(-1)).toBe("data: [DONE]");
        expect(events.slice(0, -1).map((event) => JSON.parse(event.slice(6)) as unknown)).toEqual([
            { model: "gpu/m", choices: [{ text: "On", finish_reason: null }] },
            { model: "gpu/m", choices: [{ text: "ce", finish_reason: "stop" }] }
        ]);
    });

    it("answers 502 for a whole answer it cannot read, and does not pass it on", async () => {
        script = (_request, response) => json(response, { choices: [{ message: { content: "chat-shaped" }, finish_reason: "stop" }] });
        const answer = await ask("/completions", { model: "gpu/m", prompt: "Hi" });
        expect(answer.status).toBe(502);
        expect(answer.text).not.toContain("chat-shaped");
        expect(JSON.parse(answer.text)).toMatchObject({
            error: {
                code: "backend_malformed_response",
                message: 'Backend "gpu" sent a text completion that Kvault cannot read: choices[0].text is not a string.'
            }
        });
    });

    it("ends a stream that stops without a finish reason with an error event and no [DONE]", async () => {
        script = (_request, response) => sse(response, { choices: [{ text: "On", finish_reason: null }] });
        const answer = await ask("/completions", { model: "gpu/m", prompt: "Hi", stream: true });
        const events = answer.text.split("\n\n").filter(Boolean);
        expect(events).toHaveLength(2);
        expect(JSON.parse(events[1]!.slice(6))).toMatchObject({ error: { code: "backend_malformed_response" } });
        expect(answer.text).not.toContain("[DONE]");
    });

    it("passes the backend's 400 on as a 400 with its words", async () => {
        script = (_request, response) => json(response, { error: { message: "top_k is not a field this server serves" } }, 400);
        const answer = await ask("/completions", { model: "gpu/m", prompt: "Hi", top_k: 3 });
        expect(answer.status).toBe(400);
        expect(answer.text).toMatch(/Backend \\"gpu\\" answered 400 .*top_k is not a field this server serves/);
    });
});

describe("the gateway's forwarder for /v1/embeddings", () => {
    it("passes the backend's vectors on with the model as asked, whatever `stream` says", async () => {
        const answerBody = { object: "list", model: "e", data: [{ object: "embedding", index: 0, embedding: [0.5, -0.25] }] };
        script = (_request, response) => json(response, answerBody);
        const answer = await ask("/embeddings", { model: "gpu/e", input: "x" });
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.text)).toEqual({ ...answerBody, model: "gpu/e" });
        expect(sent[0]).toEqual({ url: "/v1/embeddings", body: { model: "e", input: "x", user: "key7:notes" } });
    });

    it.each([
        ["a vector of strings", { data: [{ embedding: ["0.5"] }] }, "data[0].embedding is not a non-empty list of finite numbers"],
        ["no data", { object: "list" }, "it has no data list with an entry"]
    ])("answers 502 for %s, and does not pass it on", async (_case, answerBody, problem) => {
        script = (_request, response) => json(response, answerBody);
        const answer = await ask("/embeddings", { model: "gpu/e", input: "x" });
        expect(answer.status).toBe(502);
        expect((JSON.parse(answer.text) as { error: { message: string } }).error.message).toBe(
            `Backend "gpu" sent a list of embeddings that Kvault cannot read: ${problem}.`
        );
    });

    it("leaves a model that names no backend to the local engine", async () => {
        const answer = await ask("/embeddings", { model: "tiny", input: "x" });
        expect(answer.status).toBe(404);
        expect(sent).toEqual([]);
    });
});
