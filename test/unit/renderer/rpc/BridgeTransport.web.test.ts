import { describe, expect, it } from "vitest";
import type { KvaultBridge, TurnEventListener } from "../../../../contract/KvaultBridge.js";
import { BridgeTransport } from "../../../../renderer/rpc/BridgeTransport.js";

/** A bridge whose calls answer from a table, as the preload would after main's IPC. */
function fakeBridge(): { bridge: KvaultBridge; emit: TurnEventListener; calls: string[] } {
    const calls: string[] = [];
    let listener: TurnEventListener | undefined;
    const ok = <T>(value: T) => Promise.resolve({ ok: true as const, value });
    const bridge = {
        getAppInfo: () => Promise.resolve({ version: "0", platform: "linux" }),
        info: () => {
            calls.push("info");
            return ok({ modelName: "tiny" });
        },
        chat: (request: { requestId: string }) => {
            calls.push(`chat ${request.requestId}`);
            return Promise.resolve({ ok: false as const, error: { code: "context_length_exceeded", message: "too long" } });
        },
        cancel: (requestId: string) => {
            calls.push(`cancel ${requestId}`);
            return ok({ cancelled: true });
        },
        measure: (workspace: string, _messages: unknown, draft: string) => {
            calls.push(`measure ${workspace} ${draft}`);
            return ok({ fits: true });
        },
        snapshot: () => Promise.reject(new Error("untrusted sender")),
        forgetWorkspace: (workspace: string) => {
            calls.push(`forget ${workspace}`);
            return ok({});
        },
        audit: () => {
            calls.push("audit");
            return ok({ ok: true });
        },
        replayableTurns: () => {
            calls.push("replayableTurns");
            return ok([]);
        },
        replay: (requestId: string) => {
            calls.push(`replay ${requestId}`);
            return Promise.resolve({ ok: false as const, error: { code: "replay_unavailable", message: "not kept" } });
        },
        listDrills: () => {
            calls.push("listDrills");
            return ok([{ id: "flipped-byte" }]);
        },
        runDrill: (id: string) => {
            calls.push(`runDrill ${id}`);
            return ok({ id, guardFired: true });
        },
        inspectModel: (path: string) => {
            calls.push(`inspectModel ${path}`);
            return Promise.resolve({ ok: false as const, error: { code: "model_not_gguf", message: "not GGUF" } });
        },
        switchModel: (model: string) => {
            calls.push(`switchModel ${model}`);
            return ok({ modelName: model });
        },
        startDownload: (source: string) => {
            calls.push(`startDownload ${source}`);
            return ok({ id: "d1", source });
        },
        listDownloads: () => {
            calls.push("listDownloads");
            return ok([]);
        },
        cancelDownload: (id: string) => {
            calls.push(`cancelDownload ${id}`);
            return Promise.resolve({ ok: false as const, error: { code: "download_unknown", message: "no such download" } });
        },
        onTurnEvent: (next: TurnEventListener) => {
            listener = next;
            return () => {
                listener = undefined;
            };
        },
        getSettings: () => Promise.reject(new Error("unused")),
        setLocalApi: () => Promise.reject(new Error("unused"))
    } as unknown as KvaultBridge;
    return { bridge, emit: (event) => listener?.(event), calls };
}

describe("BridgeTransport", () => {
    it("turns each request into the named bridge call and its result into the RPC answer", async () => {
        const { bridge, calls } = fakeBridge();
        const messages: unknown[] = [];
        let opened = false;
        const transport = new BridgeTransport(bridge);
        transport.start({
            onOpen: () => {
                opened = true;
            },
            onMessage: (message) => messages.push(message),
            onClose: () => undefined
        });
        expect(opened).toBe(true);
        expect(transport.send({ id: 1, method: "info", params: {} })).toBe(true);
        transport.send({
            id: 2,
            method: "chat",
            params: { requestId: "r", workspace: "w", messages: [], sampling: { temperature: 0, maxTokens: 1 } }
        });
        transport.send({ id: 3, method: "measure", params: { workspace: "w", messages: [], draft: "hi" } });
        transport.send({ id: 4, method: "snapshot", params: {} });
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(calls).toEqual(["info", "chat r", "measure w hi"]);
        expect(messages).toEqual([
            { id: 1, result: { modelName: "tiny" } },
            { id: 2, error: { code: "context_length_exceeded", message: "too long" } },
            { id: 3, result: { fits: true } },
            { id: 4, error: { code: "bridge_refused", message: "untrusted sender" } }
        ]);
    });

    it("maps the model calls to their bridge calls", async () => {
        const { bridge, calls } = fakeBridge();
        const messages: unknown[] = [];
        const transport = new BridgeTransport(bridge);
        transport.start({ onOpen: () => undefined, onMessage: (message) => messages.push(message), onClose: () => undefined });
        transport.send({ id: 1, method: "inspectModel", params: { path: "/repo/package.json" } });
        transport.send({ id: 2, method: "switchModel", params: { model: "tiny" } });
        transport.send({ id: 3, method: "startDownload", params: { source: "hf:o/r" } });
        transport.send({ id: 4, method: "listDownloads", params: {} });
        transport.send({ id: 5, method: "cancelDownload", params: { id: "d9" } });
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(calls).toEqual([
            "inspectModel /repo/package.json",
            "switchModel tiny",
            "startDownload hf:o/r",
            "listDownloads",
            "cancelDownload d9"
        ]);
        expect(messages).toEqual([
            { id: 1, error: { code: "model_not_gguf", message: "not GGUF" } },
            { id: 2, result: { modelName: "tiny" } },
            { id: 3, result: { id: "d1", source: "hf:o/r" } },
            { id: 4, result: [] },
            { id: 5, error: { code: "download_unknown", message: "no such download" } }
        ]);
    });

    it("maps the isolation calls to their bridge calls", async () => {
        const { bridge, calls } = fakeBridge();
        const messages: unknown[] = [];
        const transport = new BridgeTransport(bridge);
        transport.start({ onOpen: () => undefined, onMessage: (message) => messages.push(message), onClose: () => undefined });
        transport.send({ id: 1, method: "audit", params: {} });
        transport.send({ id: 2, method: "replayableTurns", params: {} });
        transport.send({ id: 3, method: "replay", params: { requestId: "r7" } });
        transport.send({ id: 4, method: "listDrills", params: {} });
        transport.send({ id: 5, method: "runDrill", params: { id: "flipped-byte" } });
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(calls).toEqual(["audit", "replayableTurns", "replay r7", "listDrills", "runDrill flipped-byte"]);
        expect(messages).toEqual([
            { id: 1, result: { ok: true } },
            { id: 2, result: [] },
            { id: 3, error: { code: "replay_unavailable", message: "not kept" } },
            { id: 4, result: [{ id: "flipped-byte" }] },
            { id: 5, result: { id: "flipped-byte", guardFired: true } }
        ]);
    });

    it("passes turn events through, and stops listening when disposed", () => {
        const { bridge, emit } = fakeBridge();
        const messages: unknown[] = [];
        let closed = false;
        const transport = new BridgeTransport(bridge);
        transport.start({
            onOpen: () => undefined,
            onMessage: (message) => messages.push(message),
            onClose: () => {
                closed = true;
            }
        });
        emit({ event: "text", requestId: "r", text: "hel" });
        transport.dispose();
        emit({ event: "text", requestId: "r", text: "lo" });
        expect(messages).toEqual([{ event: "text", requestId: "r", text: "hel" }]);
        expect(closed).toBe(true);
        expect(transport.send({ id: 9, method: "info", params: {} })).toBe(false);
    });
});
