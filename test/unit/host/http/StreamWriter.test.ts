import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatTurnRequest, EngineClient, TurnResult } from "../../../../contract/engineProtocol.js";
import type { TurnListener } from "../../../../contract/turnEvents.js";
import { backendUrls } from "../../../../host/backends/BackendConfig.js";
import { Backends } from "../../../../host/backends/Backends.js";
import { backendGateway } from "../../../../host/http/gateway/serveGateway.js";
import { KvaultHttpServer } from "../../../../host/http/KvaultHttpServer.js";
import { closeServer, listenOnLoopback, pour, type PourCount } from "../../../support/misbehavingBackend.js";

// Every streamed answer of the API in front of a client that never reads, over real HTTP on
// loopback: Kvault's own server, a scripted backend behind it for a backend's model, and an engine
// that pours one-character tokens as fast as it can for the local model (it cannot be paused, as
// the real engine cannot: its turn shares a batch). What is counted: the bytes the backend managed
// to send, the tokens the engine made before it was stopped, and the bytes the client finds
// waiting for it once it reads.
const KEY = "stream-writer-key";
/** The unread bytes the server holds for a client before a local turn is stopped: tighter than the default, so the test pours less. */
const MAX_UNREAD_BYTES = 1024 * 1024;
/** Loopback's socket buffers between Kvault and the client hold some megabytes on top of what Kvault holds. */
const LOOPBACK_BUFFER_BYTES = 12 * 1024 * 1024;
/** What the backend pours at most: one character per event, far past any bound the host keeps, and under the answer's length limit. */
const POUR_LIMIT_BYTES = 64 * 1024 * 1024;
/** Tokens the engine pours at most: wrapped, tens of megabytes. */
const POUR_LIMIT_TOKENS = 400_000;
/** Tokens the engine makes between two turns of the event loop. */
const TOKENS_PER_BATCH = 256;

type Script = (request: http.IncomingMessage, response: http.ServerResponse) => void;
let script: Script = (_request, response) => response.end();
let backendServer: http.Server;
let kvault: KvaultHttpServer;
let kvaultUrl: URL;

/** What the pouring engine made of its last turn. */
interface TokenPour {
    numTokens: number;
    stopped: boolean;
    pouredAll: boolean;
}
const tokenPour: TokenPour = { numTokens: 0, stopped: false, pouredAll: false };

/** An engine whose every turn pours one-character tokens, ignoring the promise its listener gives back for a text event as the real engine does, until its signal aborts. */
const pouringEngine = {
    info: { window: { limit: 4096 }, toolCallSyntax: undefined },
    chat: async (request: ChatTurnRequest, listener: TurnListener, signal?: AbortSignal): Promise<TurnResult> => {
        while (tokenPour.numTokens < POUR_LIMIT_TOKENS) {
            if (signal?.aborted === true) {
                tokenPour.stopped = true;
                throw Object.assign(new Error("The request was cancelled."), { code: "request_cancelled" });
            }
            for (let index = 0; index < TOKENS_PER_BATCH; index++) {
                tokenPour.numTokens++;
                void listener({ type: "text", requestId: request.requestId, text: "x" });
            }
            await new Promise((resolve) => setImmediate(resolve));
        }
        tokenPour.pouredAll = true;
        const usage = { promptTokens: 1, cachedPromptTokens: 0, evaluatedPromptTokens: 1, completionTokens: tokenPour.numTokens };
        return { text: "", finishReason: "length", usage };
    },
    call: () => Promise.resolve({})
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
    const backends = new Backends([{ name: "bad", apiBase: urls.apiBase, root: urls.root, remote: false }]);
    kvault = new KvaultHttpServer({
        engine: pouringEngine,
        apiKey: KEY,
        host: "127.0.0.1",
        port: 0,
        modelId: "tiny",
        maxUnreadBytes: MAX_UNREAD_BYTES,
        gateway: backendGateway(backends)
    });
    kvaultUrl = new URL((await kvault.listen()).url);
});

afterAll(async () => {
    await kvault.close();
    await closeServer(backendServer);
});

/** Sends `body` to `path` on a raw socket that does not read until told to; its bytes then counted, its last ones kept. */
function askWithoutReading(
    path: string,
    body: Record<string, unknown>
): { socket: net.Socket; read(): { numBytes: number; tail: () => string } } {
    const text = JSON.stringify(body);
    const socket = net.connect(Number(kvaultUrl.port), "127.0.0.1");
    socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${kvaultUrl.host}\r\nAuthorization: Bearer ${KEY}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
    );
    return {
        socket,
        read: () => {
            let last = Buffer.alloc(0);
            const seen = { numBytes: 0, tail: () => last.toString("utf8") };
            socket.on("data", (chunk: Buffer) => {
                seen.numBytes += chunk.byteLength;
                last = Buffer.concat([last, chunk]).subarray(-4096);
            });
            return seen;
        }
    };
}

/** Waits, a bounded number of looks, until `done` holds; whether it did. */
async function within(numLooks: number, done: () => boolean): Promise<boolean> {
    for (let look = 0; look < numLooks && !done(); look++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return done();
}

const oneCharEvent = (path: string): string =>
    path === "/v1/completions"
        ? `data: ${JSON.stringify({ object: "text_completion", model: "m", choices: [{ index: 0, text: "x", finish_reason: null }] })}\n\n`
        : `data: ${JSON.stringify({ object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: { content: "x" }, finish_reason: null }] })}\n\n`;

describe("Ollama's API in front of a backend that pours one character per event, to a client that does not read", () => {
    it.each([
        { route: "/api/chat", body: { model: "bad/m", messages: [{ role: "user", content: "Hi" }] } },
        { route: "/api/generate", body: { model: "bad/m", prompt: "Hi", raw: true } }
    ])(
        "$route holds the backend back: what it sends stays bounded",
        async ({ route, body }) => {
            const count: PourCount = { numBytesSent: 0, waiting: false, pouredAll: false };
            script = (request, response) => {
                response.writeHead(200, { "content-type": "text/event-stream" });
                void pour(response, oneCharEvent(new URL(request.url!, "http://backend").pathname), POUR_LIMIT_BYTES, count);
            };
            const client = askWithoutReading(route, body);
            // wait until the backend has been held for 20 looks in a row, or has poured everything
            let numStillLooks = 0;
            let last = -1;
            await within(900, () => {
                numStillLooks = count.waiting && count.numBytesSent === last ? numStillLooks + 1 : 0;
                last = count.numBytesSent;
                return numStillLooks >= 20 || count.pouredAll;
            });
            client.socket.destroy();
            // without backpressure the host reads all it is sent and holds every line, each ~100 bytes for 1 character
            expect(count.pouredAll).toBe(false);
            expect(count.numBytesSent).toBeLessThan(2 * LOOPBACK_BUFFER_BYTES);
        },
        90_000
    );
});

describe("a local turn streamed to a client that does not read", () => {
    it.each([
        { route: "/v1/chat/completions", body: { model: "tiny", stream: true, messages: [{ role: "user", content: "Hi" }] } },
        { route: "/v1/completions", body: { model: "tiny", stream: true, prompt: "Hi" } },
        { route: "/api/chat", body: { model: "tiny", messages: [{ role: "user", content: "Hi" }] } },
        { route: "/api/generate", body: { model: "tiny", prompt: "Hi" } }
    ])(
        `$route stops the engine once ${MAX_UNREAD_BYTES.toLocaleString("en-US")} bytes are unread, and ends with client_not_reading`,
        async ({ route, body }) => {
            Object.assign(tokenPour, { numTokens: 0, stopped: false, pouredAll: false });
            const client = askWithoutReading(route, body);
            await within(900, () => tokenPour.stopped || tokenPour.pouredAll);
            expect(tokenPour.pouredAll).toBe(false);
            expect(tokenPour.stopped).toBe(true);
            // what the host held for the client (and loopback's buffers): the cap, one line, the error
            const seen = client.read();
            const ended = await within(400, () => seen.tail().endsWith("0\r\n\r\n"));
            client.socket.destroy();
            expect(ended).toBe(true);
            expect(seen.numBytes).toBeLessThan(MAX_UNREAD_BYTES + LOOPBACK_BUFFER_BYTES);
            // OpenAI's error event carries the code; Ollama's last line, as its errors do, the message alone
            const lastLine = seen
                .tail()
                .split(/\r?\n/)
                .findLast((line) => line.includes('"error"'));
            expect(lastLine).toContain(route.startsWith("/v1/") ? '"code":"client_not_reading"' : '{"error":"The client left');
            expect(lastLine).toMatch(
                /The client left [\d,]+ bytes of this streamed answer unread; Kvault holds at most 1,048,576 for a client and cannot pause the model, so it stopped the answer there\. Read the stream as it comes, or ask with stream: false\./
            );
        },
        90_000
    );
});
