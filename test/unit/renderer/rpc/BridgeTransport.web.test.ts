import { describe, expect, it } from "vitest";
import type { KvaultBridge, TurnListener } from "../../../../contract/KvaultBridge.js";
import type { TurnEvent } from "../../../../contract/turnEvents.js";
import { BridgeTransport } from "../../../../renderer/rpc/BridgeTransport.js";

/** A bridge whose calls answer from a table, by method, as the preload would after main's IPC. */
function fakeBridge(): { bridge: KvaultBridge; emit: (event: TurnEvent) => void; calls: string[] } {
    const calls: string[] = [];
    let listener: TurnListener | undefined;
    const ok = <T>(value: T) => Promise.resolve({ ok: true as const, value });
    const failed = (code: string, message: string) => Promise.resolve({ ok: false as const, error: { code, message } });
    const table: Record<string, (params: Record<string, unknown>) => Promise<unknown>> = {
        info: () => {
            calls.push("info");
            return ok({ modelName: "tiny" });
        },
        chat: (request) => {
            calls.push(`chat ${String(request.requestId)}`);
            return failed("context_length_exceeded", "too long");
        },
        measure: ({ workspace, draft }) => {
            calls.push(`measure ${String(workspace)} ${String(draft)}`);
            return ok({ fits: true });
        },
        snapshot: () => Promise.reject(new Error("untrusted sender")),
        audit: () => {
            calls.push("audit");
            return ok({ ok: true });
        },
        replay: ({ requestId }) => {
            calls.push(`replay ${String(requestId)}`);
            return failed("replay_unavailable", "not kept");
        },
        inspectModel: ({ path }) => {
            calls.push(`inspectModel ${String(path)}`);
            return failed("model_not_gguf", "not GGUF");
        },
        switchModel: ({ model }) => {
            calls.push(`switchModel ${String(model)}`);
            return ok({ modelName: model });
        },
        cancelDownload: ({ id }) => {
            calls.push(`cancelDownload ${String(id)}`);
            return failed("download_unknown", "no such download");
        }
    };
    const bridge: KvaultBridge = {
        getAppInfo: () => Promise.resolve({ version: "0", platform: "linux" }),
        call: (method, params) => (table[method] ?? (() => failed("not_in_this_test", method)))(params as Record<string, unknown>) as never,
        onTurnEvent: (next: TurnListener) => {
            listener = next;
            return () => {
                listener = undefined;
            };
        },
        onAppCommand: () => () => undefined
    };
    return { bridge, emit: (event) => void listener?.(event), calls };
}

describe("BridgeTransport", () => {
    it("turns each request into one bridge call by method name, and its result into the RPC answer", async () => {
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

    it("sends every method the same way, by name, whoever serves it: the model manager's, the isolation panel's", async () => {
        const { bridge, calls } = fakeBridge();
        const messages: unknown[] = [];
        const transport = new BridgeTransport(bridge);
        transport.start({ onOpen: () => undefined, onMessage: (message) => messages.push(message), onClose: () => undefined });
        transport.send({ id: 1, method: "inspectModel", params: { path: "/repo/package.json" } });
        transport.send({ id: 2, method: "switchModel", params: { model: "tiny" } });
        transport.send({ id: 3, method: "cancelDownload", params: { id: "d9" } });
        transport.send({ id: 4, method: "audit", params: {} });
        transport.send({ id: 5, method: "replay", params: { requestId: "r7" } });
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(calls).toEqual(["inspectModel /repo/package.json", "switchModel tiny", "cancelDownload d9", "audit", "replay r7"]);
        expect(messages).toEqual([
            { id: 1, error: { code: "model_not_gguf", message: "not GGUF" } },
            { id: 2, result: { modelName: "tiny" } },
            { id: 3, error: { code: "download_unknown", message: "no such download" } },
            { id: 4, result: { ok: true } },
            { id: 5, error: { code: "replay_unavailable", message: "not kept" } }
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
        emit({ type: "text", requestId: "r", text: "hel" });
        transport.dispose();
        emit({ type: "text", requestId: "r", text: "lo" });
        expect(messages).toEqual([{ type: "text", requestId: "r", text: "hel" }]);
        expect(closed).toBe(true);
        expect(transport.send({ id: 9, method: "info", params: {} })).toBe(false);
    });
});
