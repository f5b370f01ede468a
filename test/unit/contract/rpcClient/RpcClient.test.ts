import { describe, expect, it, vi } from "vitest";
import type { RpcRequest } from "../../../../contract/rpc.js";
import { RpcClient, RpcError, type RpcTransport, type RpcTransportHandlers } from "../../../../contract/rpcClient/index.js";

class FakeTransport implements RpcTransport {
    handlers!: RpcTransportHandlers;
    readonly sent: RpcRequest[] = [];
    open = false;
    start(handlers: RpcTransportHandlers): void {
        this.handlers = handlers;
    }
    send(request: RpcRequest): boolean {
        if (!this.open) {
            return false;
        }
        this.sent.push(request);
        return true;
    }
    dispose(): void {}
    connect(): void {
        this.open = true;
        this.handlers.onOpen();
    }
    drop(willRetry = true): void {
        this.open = false;
        this.handlers.onClose(willRetry, 1);
    }
}

describe("RpcClient", () => {
    it("rejects a call its transport cannot send (over the RPC's message limit) with the transport's error, and goes on", async () => {
        const transport = new FakeTransport();
        const client = new RpcClient(transport);
        transport.connect();
        const send = transport.send.bind(transport);
        transport.send = (request) => {
            if (request.method === "appendMessage") {
                throw new RpcError("rpc_message_too_large", "This RPC message is 40,000,000 bytes (UTF-8); …");
            }
            return send(request);
        };
        await expect(
            client.call("appendMessage", { workspace: "ui-a", message: { id: "m-1", role: "user", content: "…" } })
        ).rejects.toMatchObject({ code: "rpc_message_too_large", message: expect.stringMatching(/^This RPC message is 40,000,000 bytes/) });
        const info = client.call("info", {});
        transport.handlers.onMessage({ id: transport.sent.at(-1)!.id, result: { modelName: "tiny" } });
        await expect(info).resolves.toEqual({ modelName: "tiny" });
    });

    it("refuses calls before the connection opens, with a message that says it reconnects by itself", async () => {
        const client = new RpcClient(new FakeTransport());
        expect(client.status).toEqual({ kind: "connecting" });
        await expect(client.call("info", {})).rejects.toMatchObject({
            code: "not_connected",
            message: expect.stringMatching(/reconnects by itself/)
        });
    });

    it("numbers calls and matches answers and errors to them, whatever their order", async () => {
        const transport = new FakeTransport();
        const client = new RpcClient(transport);
        transport.connect();
        const info = client.call("info", {});
        const measure = client.call("measure", { workspace: "w", messages: [], draft: "hi" });
        expect(transport.sent.map((request) => [request.id, request.method])).toEqual([
            [1, "info"],
            [2, "measure"]
        ]);

        transport.handlers.onMessage({ id: 2, error: { code: "invalid_request", message: "measure takes workspace (string)." } });
        transport.handlers.onMessage({ id: 1, result: { modelName: "tiny" } });
        await expect(info).resolves.toEqual({ modelName: "tiny" });
        const error = await measure.catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(RpcError);
        expect(error).toMatchObject({ code: "invalid_request", message: "measure takes workspace (string)." });
    });

    it("routes a turn's events to its listener by requestId and stops once the turn settled", async () => {
        const transport = new FakeTransport();
        const client = new RpcClient(transport);
        transport.connect();
        const heard: string[] = [];
        const turn = client.chat(
            { requestId: "r1", workspace: "w", messages: [{ role: "user", content: "hi" }], sampling: { temperature: 0, maxTokens: 4 } },
            (event) =>
                void heard.push(
                    event.type === "queued" ? `queued ${event.position}` : event.type === "text" ? `text ${event.text}` : event.type
                )
        );
        transport.handlers.onMessage({ type: "queued", requestId: "r1", position: 2 });
        transport.handlers.onMessage({ type: "started", requestId: "r1" });
        transport.handlers.onMessage({ type: "text", requestId: "other", text: "not ours" });
        transport.handlers.onMessage({ type: "text", requestId: "r1", text: "Hel" });
        transport.handlers.onMessage({ type: "text", requestId: "r1", text: "lo" });
        transport.handlers.onMessage({ id: 1, result: { text: "Hello", finishReason: "stop", usage: {} } });
        await expect(turn).resolves.toMatchObject({ text: "Hello" });
        transport.handlers.onMessage({ type: "text", requestId: "r1", text: "late" });
        expect(heard).toEqual(["queued 2", "started", "text Hel", "text lo"]);
    });

    it("fails every call in flight when the connection closes, and reports reconnecting", async () => {
        const transport = new FakeTransport();
        const client = new RpcClient(transport);
        const statuses: string[] = [];
        client.onStatus((status) => statuses.push(status.kind));
        transport.connect();
        const turn = client.chat(
            { requestId: "r1", workspace: "w", messages: [{ role: "user", content: "hi" }], sampling: { temperature: 0, maxTokens: 4 } },
            () => undefined
        );
        transport.drop();
        await expect(turn).rejects.toMatchObject({ code: "connection_lost", message: expect.stringMatching(/goes on in the server/) });
        expect(client.status).toEqual({ kind: "reconnecting", attempt: 1 });
        transport.connect();
        expect(statuses).toEqual(["open", "reconnecting", "open"]);
    });

    it("ignores messages that are not RPC messages", () => {
        const transport = new FakeTransport();
        const client = new RpcClient(transport);
        transport.connect();
        for (const message of [null, 42, "text", [], { id: "1", result: 1 }, { type: "text" }]) {
            expect(() => transport.handlers.onMessage(message)).not.toThrow();
        }
        expect(client.status.kind).toBe("open");
    });

    it("rejects a call with rpc_timeout, naming the method and the limit, when no answer comes within the client's or the call's limit", async () => {
        vi.useFakeTimers();
        try {
            const transport = new FakeTransport();
            const client = new RpcClient(transport, { callTimeoutMs: 30_000 });
            transport.connect();
            const slow = client.call("info", {}).catch((caught: unknown) => caught);
            const slower = client.call("listModels", {}, { timeoutMs: 90_000 }).catch((caught: unknown) => caught);
            await vi.advanceTimersByTimeAsync(30_000);
            expect(await slow).toMatchObject({ code: "rpc_timeout", message: "Kvault did not answer info within 30 s." });
            transport.handlers.onMessage({ id: 1, result: { modelName: "late" } }); // an answer after its time limit changes nothing
            await vi.advanceTimersByTimeAsync(60_000);
            expect(await slower).toMatchObject({ code: "rpc_timeout", message: "Kvault did not answer listModels within 90 s." });
        } finally {
            vi.useRealTimers();
        }
    });

    it("whenOpen resolves once the connection opens, and rejects with not_connected when a transport that does not reconnect closes first", async () => {
        const opening = new FakeTransport();
        const opened = new RpcClient(opening).whenOpen(30_000);
        opening.connect();
        await expect(opened).resolves.toBeUndefined();

        const refused = new FakeTransport();
        const client = new RpcClient(refused);
        const failed = client.whenOpen(30_000);
        refused.drop(false);
        await expect(failed).rejects.toMatchObject({ code: "not_connected" });
        expect(client.status).toEqual({ kind: "unavailable", reason: "The connection to the Kvault server closed." });
        await expect(client.call("info", {})).rejects.toMatchObject({
            code: "not_connected",
            message: "The connection to the Kvault server closed."
        });
    });
});
