import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineService } from "../../../engine/service/EngineService.js";
import { httpDefaults, type KvaultHttpServerOptions } from "../../../host/http/KvaultHttpServer.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { listenApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "timeouts-test-key";

/** A raw TCP client: writes what the test says, collects what the server sends, and knows when the server closed it. */
class RawConnection {
    received = "";
    readonly closed: Promise<void>;
    #isClosed = false;

    private constructor(readonly socket: net.Socket) {
        socket.on("data", (chunk: Buffer) => void (this.received += chunk.toString("latin1")));
        socket.on("error", () => undefined); // a reset counts as closed
        this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
        void this.closed.then(() => void (this.#isClosed = true));
    }

    static async open(url: string): Promise<RawConnection> {
        const { hostname, port } = new URL(url);
        const socket = net.connect(Number(port), hostname);
        await new Promise<void>((resolve, reject) => {
            socket.once("connect", () => resolve());
            socket.once("error", reject);
        });
        return new RawConnection(socket);
    }

    get isClosed(): boolean {
        return this.#isClosed;
    }

    /** Writes `text` one byte every `everyMs` until it is all written or the server closed the connection. */
    async trickle(text: string, everyMs: number): Promise<number> {
        let numWritten = 0;
        for (const byte of text) {
            if (this.#isClosed) {
                break;
            }
            this.socket.write(byte);
            numWritten++;
            await new Promise((resolve) => setTimeout(resolve, everyMs));
        }
        return numWritten;
    }

    /** Waits (at most `ms`) for the server to close the connection; true when it did. */
    async closedWithin(ms: number): Promise<boolean> {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<boolean>((resolve) => void (timer = setTimeout(() => resolve(false), ms)));
        const result = await Promise.race([this.closed.then(() => true), timeout]);
        clearTimeout(timer);
        return result;
    }

    destroy(): void {
        this.socket.destroy();
    }
}

const post = (url: string, maxTokens = 2): Promise<Response> =>
    fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" },
        body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "still there?" }], max_tokens: maxTokens })
    });

function requestHead(host: string, contentLength: number): string {
    return (
        "POST /v1/chat/completions HTTP/1.1\r\n" +
        `Host: ${host}\r\n` +
        `Authorization: Bearer ${API_KEY}\r\n` +
        "Content-Type: application/json\r\n" +
        `Content-Length: ${contentLength}\r\n\r\n`
    );
}

// A local client that sends slowly, or holds many connections, must not tie the server up: each
// connection has deadlines for its headers, its body and its silences, and one connection over
// the cap is turned away with a 503 at once.
describe("the HTTP server's deadlines and connection cap", () => {
    let service: EngineService;
    beforeAll(async () => {
        service = await EngineService.start({ modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false });
    });
    afterAll(async () => {
        await service.dispose();
    });

    async function withServer(
        options: Partial<KvaultHttpServerOptions>,
        body: (url: string, host: string) => Promise<void>
    ): Promise<void> {
        const { server, url, port } = await listenApiServer(service, {
            apiKey: API_KEY,
            server: { requestTimeoutMs: httpDefaults.requestTimeoutMs, ...options }
        });
        try {
            await body(url, `127.0.0.1:${port}`);
        } finally {
            await server.close();
        }
    }

    const deadlines = { headersTimeoutMs: 1_000, bodyTimeoutMs: 2_000, idleTimeoutMs: 600 };

    it("cuts headers sent a byte at a time with a 408, and serves the next client", async () => {
        await withServer(deadlines, async (url, host) => {
            const slow = await RawConnection.open(url);
            const head = requestHead(host, 2);
            // 1 byte every 100 ms: the whole head would take over 10 s, ten times the headers timeout.
            const numWritten = await slow.trickle(head, 100);
            expect(await slow.closedWithin(10_000)).toBe(true);
            expect(numWritten).toBeLessThan(head.length);
            expect(slow.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
            expect((await post(url)).status).toBe(200);
        });
    });

    it("closes a connection that never sends a request", async () => {
        await withServer(deadlines, async (url) => {
            const silent = await RawConnection.open(url);
            expect(await silent.closedWithin(10_000)).toBe(true);
            expect((await fetch(`${url}/health`)).status).toBe(200);
        });
    });

    it("cuts a body that stops arriving (no byte for the idle timeout) with a 408 that says why", async () => {
        await withServer(deadlines, async (url, host) => {
            const stalled = await RawConnection.open(url);
            stalled.socket.write(requestHead(host, 1_000) + '{"model":"tiny",');
            expect(await stalled.closedWithin(10_000)).toBe(true);
            expect(stalled.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
            expect(stalled.received).toMatch(/\r\nConnection: close\r\n/i);
            const body = JSON.parse(stalled.received.slice(stalled.received.indexOf("\r\n\r\n") + 4)) as {
                error: { code: string; message: string };
            };
            expect(body.error).toMatchObject({
                code: "request_body_timeout",
                message: "The request body stopped arriving: no byte for 600 ms. Send the whole body at once."
            });
            expect((await post(url)).status).toBe(200);
        });
    });

    it("cuts a body trickled just fast enough to dodge the idle timeout once the body timeout is up", async () => {
        await withServer(deadlines, async (url, host) => {
            const trickled = await RawConnection.open(url);
            const body = JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "x".repeat(200) }], max_tokens: 1 });
            trickled.socket.write(requestHead(host, body.length));
            // A byte every 150 ms (under the 600 ms idle timeout): the body would take over 35 s.
            const numWritten = await trickled.trickle(body, 150);
            expect(await trickled.closedWithin(10_000)).toBe(true);
            expect(numWritten).toBeLessThan(body.length);
            expect(trickled.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
            expect((await post(url)).status).toBe(200);
        });
        await expectEngineClean(service.engine);
    });

    it("answers the connection over the cap with a 503 and Retry-After at once, and serves again once connections close", async () => {
        // Long deadlines: the held connections stay open until the test closes them.
        await withServer(
            { maxConnections: 4, headersTimeoutMs: 60_000, bodyTimeoutMs: 60_000, idleTimeoutMs: 60_000 },
            async (url, host) => {
                const held = await Promise.all([0, 1, 2, 3].map(() => RawConnection.open(url)));
                held[0]!.socket.write(requestHead(host, 100)); // one mid-request, the others silent

                const refused = await fetch(`${url}/health`);
                expect(refused.status).toBe(503);
                expect(refused.headers.get("retry-after")).toBe("1");
                expect(await refused.json()).toEqual({
                    error: {
                        message:
                            "Kvault has 4 connections open, the most it takes (4). Retry in 1 s, or close connections you no longer use.",
                        type: "server_error",
                        param: null,
                        code: "too_many_connections"
                    }
                });
                // One that sends nothing is answered the same, and closed.
                const extra = await RawConnection.open(url);
                expect(await extra.closedWithin(10_000)).toBe(true);
                expect(extra.received).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\nRetry-After: 1\r\n/);
                expect(held.some((connection) => connection.isClosed)).toBe(false);

                for (const connection of held) {
                    connection.destroy();
                }
                let health = 0;
                for (let attempt = 0; attempt < 100 && health !== 200; attempt++) {
                    await new Promise((resolve) => setTimeout(resolve, 50));
                    health = (await fetch(`${url}/health`)).status;
                }
                expect(health).toBe(200);
                expect((await post(url)).status).toBe(200);
            }
        );
        await expectEngineClean(service.engine);
    });
});
