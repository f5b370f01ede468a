import http from "node:http";
import net from "node:net";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineClient } from "../../../../../contract/engineProtocol.js";
import { backendUrls } from "../../../../../host/backends/BackendConfig.js";
import { backendLimits } from "../../../../../host/backends/backendErrors.js";
import { Backends } from "../../../../../host/backends/Backends.js";
import { backendGateway } from "../../../../../host/http/gateway/serveGateway.js";
import { KvaultHttpServer } from "../../../../../host/http/KvaultHttpServer.js";
import { repositoryRoot } from "../../../../support/generatedModels.js";
import { closeServer, listenOnLoopback, pour, type PourCount } from "../../../../support/misbehavingBackend.js";

// The gateway's relay against a backend that misbehaves, over real HTTP on loopback on both sides:
// Kvault's own HTTP server in front (its engine is not on this path and is never called), a
// scripted backend behind it. What is counted: the bytes the backend managed to send, the text
// the client got, the status and error the client saw.
const KEY = "gateway-bounds-key";
/** A streamed request's header wait, tighter than the default so the test need not wait 30 s. */
const HEADERS_TIMEOUT_MS = 400;
/** What the backend pours at most: far past any bound the relay keeps. */
const POUR_LIMIT_BYTES = 256 * 1024 * 1024;

type Script = (request: http.IncomingMessage, response: http.ServerResponse) => void;
let script: Script = (_request, response) => response.end();
let backendServer: http.Server;
let kvault: KvaultHttpServer;
let kvaultUrl: string;

const neverCalledEngine = {
    chat: () => Promise.reject(new Error("the gateway's path never reaches the engine")),
    call: () => Promise.reject(new Error("the gateway's path never reaches the engine"))
} as unknown as EngineClient;

beforeAll(async () => {
    backendServer = http.createServer((request, response) => {
        request.resume();
        request.on("end", () => script(request, response));
    });
    const urls = backendUrls(await listenOnLoopback(backendServer));
    if (!urls.ok) {
        throw new Error(urls.reason);
    }
    const limits = { ...backendLimits, headersTimeoutMs: HEADERS_TIMEOUT_MS };
    const backends = new Backends([{ name: "bad", apiBase: urls.apiBase, root: urls.root, remote: false }], limits);
    kvault = new KvaultHttpServer({
        engine: neverCalledEngine,
        apiKey: KEY,
        host: "127.0.0.1",
        port: 0,
        modelId: "tiny",
        gateway: backendGateway(backends)
    });
    kvaultUrl = (await kvault.listen()).url;
});

afterAll(async () => {
    await kvault.close();
    await closeServer(backendServer);
});

const chunkEvent = (fields: Record<string, unknown>): string =>
    `data: ${JSON.stringify({ object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: fields, finish_reason: null }] })}\n\n`;

const streamedChat = { model: "bad/m", stream: true, messages: [{ role: "user", content: "Hi" }] };

/** The client gives up after `giveUpMs`: a bound on the test, not a measurement. */
async function ask(body: Record<string, unknown>, giveUpMs = 50_000): Promise<{ status: number; text: string }> {
    const response = await fetch(`${kvaultUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(giveUpMs)
    });
    return { status: response.status, text: await response.text() };
}

describe("the gateway's relay of a backend's stream", () => {
    it("holds a fast backend back while the client does not read: what the backend sends stays bounded", async () => {
        const count: PourCount = { numBytesSent: 0, waiting: false, pouredAll: false };
        // text-free events, so that the answer's length limit does not end the stream first
        const event = chunkEvent({ role: "assistant", padding: "p".repeat(16 * 1024) });
        script = (_request, response) => {
            response.writeHead(200, { "content-type": "text/event-stream" });
            void pour(response, event, POUR_LIMIT_BYTES, count);
        };
        const body = JSON.stringify(streamedChat);
        const client = net.connect(Number(new URL(kvaultUrl).port), "127.0.0.1");
        client.write(
            `POST /v1/chat/completions HTTP/1.1\r\nHost: ${new URL(kvaultUrl).host}\r\nAuthorization: Bearer ${KEY}\r\n` +
                `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
        );
        // the client never reads: wait until the backend has been held for 20 looks in a row, or has poured everything
        let numStillLooks = 0;
        let last = -1;
        for (let look = 0; look < 600 && numStillLooks < 20 && !count.pouredAll; look++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
            numStillLooks = count.waiting && count.numBytesSent === last ? numStillLooks + 1 : 0;
            last = count.numBytesSent;
        }
        client.destroy();
        // loopback's socket buffers on both hops hold some megabytes; without backpressure the host took all it was sent
        expect(count.pouredAll).toBe(false);
        expect(count.numBytesSent).toBeLessThan(64 * 1024 * 1024);
    }, 60_000);

    it(`ends an answer over ${backendLimits.maxAnswerChars.toLocaleString("en-US")} characters with an error event in the stream's shape, and stops the backend`, async () => {
        const count: PourCount = { numBytesSent: 0, waiting: false, pouredAll: false };
        script = (_request, response) => {
            response.writeHead(200, { "content-type": "text/event-stream" });
            void pour(response, chunkEvent({ content: "x".repeat(8 * 1024) }), 64 * 1024 * 1024, count);
        };
        const answer = await ask(streamedChat);
        expect(answer.status).toBe(200);
        const events = answer.text.split("\n\n").filter(Boolean);
        const chunks = events
            .slice(0, -1)
            .map((event) => JSON.parse(event.slice("data: ".length)) as { choices: { delta: { content: string } }[] });
        const numChars = chunks.reduce((sum, chunk) => sum + chunk.choices[0]!.delta.content.length, 0);
        expect(numChars).toBeLessThanOrEqual(backendLimits.maxAnswerChars);
        expect(numChars).toBeGreaterThan(backendLimits.maxAnswerChars - 8 * 1024);
        expect(events).not.toContain("data: [DONE]");
        expect(JSON.parse(events.at(-1)!.slice("data: ".length))).toEqual({
            error: {
                message:
                    'Backend "bad" streamed an answer of more than 4,194,304 characters; Kvault stopped it there. Ask for fewer tokens (max_tokens).',
                type: "server_error",
                param: null,
                code: "backend_response_too_large"
            }
        });
        expect(count.pouredAll).toBe(false);
    }, 60_000);

    it("answers 504 with the numbers when a streamed request's headers do not come within the header wait", async () => {
        script = () => undefined; // takes the request, never answers
        const answer = await ask(streamedChat, 20_000);
        expect(answer.status).toBe(504);
        expect(JSON.parse(answer.text)).toMatchObject({
            error: {
                code: "backend_timeout",
                message: expect.stringMatching(
                    new RegExp(
                        `^Backend "bad" sent no response headers to POST http://127\\.0\\.0\\.1:\\d+/v1/chat/completions within ${HEADERS_TIMEOUT_MS} ms\\.`
                    )
                )
            }
        });
    }, 30_000);

    it("waits 30 s by default for a streamed answer's headers, as docs/backends.md says, apart from the 5 min idle wait", () => {
        expect(backendLimits.headersTimeoutMs).toBe(30_000);
        expect(backendLimits.idleTimeoutMs).toBe(300_000);
        const documented = fs.readFileSync(`${repositoryRoot}/docs/backends.md`, "utf8").replace(/\s+/g, " ");
        expect(documented).toContain("30 s for a streamed answer's headers");
    });
});
