import { describe, expect, it } from "vitest";
import { EngineRequestError, EngineStartError } from "../../../../host/supervisor/engineHostErrors.js";
import type { FakeEngine } from "./rpcDispatcherFakes.js";
import { info, result, turn, download, fakeEngine, dispatcher, caller, settle } from "./rpcDispatcherFakes.js";

describe("RpcDispatcher, the one server loop of both hosts", () => {
    it("answers each call with an RpcAnswer from the engine", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const window = caller(1);
        expect(await rpc.call(window, "info", {})).toEqual({ ok: true, value: info });
        expect(await rpc.call(window, "measure", { workspace: "alice", messages: [], draft: "hi" })).toMatchObject({
            ok: true,
            value: { fits: true }
        });
        expect(await rpc.call(window, "forgetWorkspace", { workspace: "alice" })).toEqual({ ok: true, value: {} });
        expect(await rpc.call(window, "snapshot", {})).toEqual({ ok: true, value: {} });
        expect(engine.calls).toEqual(["info", "measure alice 0 hi", "forget alice", "snapshot"]);
    });

    it("answers the isolation calls, a drill's or a replay's refusal with its code", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const window = caller(1);
        expect(await rpc.call(window, "audit", {})).toEqual({ ok: true, value: { ok: true, numViolations: 0 } });
        expect(await rpc.call(window, "replayableTurns", {})).toEqual({
            ok: true,
            value: [{ requestId: "r0", workspace: "alice", numTokens: 4 }]
        });
        expect(await rpc.call(window, "replay", { requestId: "r0" })).toMatchObject({ ok: true, value: { identical: true, numTokens: 4 } });
        expect(await rpc.call(window, "replay", { requestId: "r9" })).toEqual({
            ok: false,
            error: { code: "replay_unavailable", message: "Turn r9 cannot be replayed." }
        });
        expect(await rpc.call(window, "listDrills", {})).toMatchObject({ ok: true, value: [{ id: "flipped-byte" }] });
        expect(await rpc.call(window, "runDrill", { id: "flipped-byte" })).toEqual({
            ok: true,
            value: { id: "flipped-byte", guardFired: true }
        });
        expect(await rpc.call(window, "runDrill", { id: "nope" })).toMatchObject({ ok: false, error: { code: "unknown_drill" } });
        expect(await rpc.call(window, "runDrill", { id: "" })).toMatchObject({ ok: false, error: { code: "invalid_request" } });
        expect(await rpc.call(window, "audit", { scanFreePages: false })).toMatchObject({ ok: false, error: { code: "invalid_request" } });
        expect(engine.calls).toEqual([
            "audit",
            "replayableTurns",
            "replay r0",
            "replay r9",
            "listDrills",
            "runDrill flipped-byte",
            "runDrill nope"
        ]);
    });

    it("answers inspectModel and switchModel, a bad file's refusal with its code", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const window = caller(1);
        expect(await rpc.call(window, "inspectModel", { path: "/m/a.gguf" })).toEqual({
            ok: true,
            value: { path: "/m/a.gguf", architecture: "llama" }
        });
        expect(await rpc.call(window, "inspectModel", { path: "/repo/package.json" })).toMatchObject({
            ok: false,
            error: { code: "model_not_gguf", message: expect.stringMatching(/is not a GGUF file/) }
        });
        expect(await rpc.call(window, "switchModel", { model: "tiny" })).toEqual({ ok: true, value: { ...info, modelName: "tiny" } });
        expect(await rpc.call(window, "switchModel", { model: "" })).toMatchObject({ ok: false, error: { code: "invalid_request" } });
        expect(await rpc.call(window, "inspectModel", { path: "x".repeat(4097) })).toMatchObject({
            ok: false,
            error: { code: "invalid_request" }
        });
        expect(await rpc.call(window, "inspectModel", { model: "/m/a.gguf" })).toMatchObject({
            ok: false,
            error: { code: "invalid_request" }
        });
        expect(engine.calls).toEqual(["inspectModel /m/a.gguf", "inspectModel /repo/package.json", "switchModel tiny"]);
    });

    it("answers startDownload, listDownloads and cancelDownload; refuses a bad source or id before the engine", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const window = caller(1);
        expect(await rpc.call(window, "startDownload", { source: "https://example.com/m.gguf" })).toEqual({
            ok: true,
            value: { ...download, source: "https://example.com/m.gguf" }
        });
        expect(await rpc.call(window, "listDownloads", {})).toEqual({ ok: true, value: [download] });
        expect(await rpc.call(window, "cancelDownload", { id: "d1" })).toMatchObject({ ok: true, value: { state: "cancelled" } });
        expect(await rpc.call(window, "cancelDownload", { id: "d9" })).toMatchObject({ ok: false, error: { code: "download_unknown" } });
        expect(await rpc.call(window, "startDownload", { source: "" })).toMatchObject({ ok: false, error: { code: "invalid_request" } });
        expect(await rpc.call(window, "startDownload", { source: "h".repeat(4097) })).toMatchObject({
            ok: false,
            error: { code: "invalid_request" }
        });
        expect(await rpc.call(window, "startDownload", { url: "https://example.com/m.gguf" })).toMatchObject({
            ok: false,
            error: { code: "invalid_request" }
        });
        expect(await rpc.call(window, "cancelDownload", { id: "" })).toMatchObject({ ok: false, error: { code: "invalid_request" } });
        expect(engine.calls).toEqual([
            "startDownload https://example.com/m.gguf",
            "listDownloads",
            "cancelDownload d1",
            "cancelDownload d9"
        ]);
    });

    it("answers resumeDownload, listModels and forgetModel; refuses a bad id or deleteFile before the engine", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const window = caller(1);
        expect(await rpc.call(window, "resumeDownload", { id: "d1" })).toEqual({ ok: true, value: download });
        expect(await rpc.call(window, "resumeDownload", { id: "d2" })).toMatchObject({
            ok: false,
            error: { code: "download_not_resumable" }
        });
        expect(await rpc.call(window, "listModels", {})).toEqual({ ok: true, value: { models: [], problems: [] } });
        expect(await rpc.call(window, "forgetModel", { id: "m1" })).toEqual({ ok: true, value: { models: [], problems: [] } });
        expect(await rpc.call(window, "forgetModel", { id: "m1", deleteFile: true })).toMatchObject({
            ok: false,
            error: { code: "library_file_not_owned" }
        });
        expect(await rpc.call(window, "forgetModel", { id: "m1", deleteFile: "yes" })).toMatchObject({
            ok: false,
            error: { code: "invalid_request", message: 'deleteFile must be true or false; got "yes".' }
        });
        expect(await rpc.call(window, "forgetModel", { id: "" })).toMatchObject({ ok: false, error: { code: "invalid_request" } });
        expect(await rpc.call(window, "resumeDownload", { id: 7 })).toMatchObject({ ok: false, error: { code: "invalid_request" } });
        expect(await rpc.call(window, "listModels", { all: true })).toMatchObject({ ok: false, error: { code: "invalid_request" } });
        expect(engine.calls).toEqual([
            "resumeDownload d1",
            "resumeDownload d2",
            "listModels",
            "forgetModel m1 false",
            "forgetModel m1 true"
        ]);
    });

    it("answers chooseModelFile on a host without a window (headless) with dialog_unavailable and what to do", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        expect(await rpc.call(caller(1), "chooseModelFile", {})).toEqual({
            ok: false,
            error: {
                code: "dialog_unavailable",
                message:
                    "This Kvault runs headless (npm run serve): it has no window to show a file dialog in. Type the model's full path in the model panel, then Inspect."
            }
        });
        expect(engine.calls).toEqual([]);
    });

    it("refuses a bad payload with invalid_request, without touching the engine", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const answer = await rpc.call(caller(1), "forgetWorkspace", { workspace: 42 });
        expect(answer).toMatchObject({ ok: false, error: { code: "invalid_request" } });
        expect(await rpc.call(caller(1), "shutdown", {})).toMatchObject({ ok: false, error: { code: "invalid_request" } });
        expect(engine.calls).toEqual([]);
    });

    it("waits for an engine that is still starting", async () => {
        const engine = fakeEngine();
        let ready!: (client: FakeEngine) => void;
        const starting = new Promise<FakeEngine>((resolve) => {
            ready = resolve;
        });
        const rpc = dispatcher(() => starting);
        const answer = rpc.call(caller(1), "info", {});
        await settle();
        expect(engine.calls).toEqual([]);
        ready(engine);
        expect(await answer).toEqual({ ok: true, value: info });
    });

    it("answers every call with the engine's start failure, code kept", async () => {
        const failure = new EngineStartError("The engine could not start: no such model.");
        const rpc = dispatcher(() => Promise.reject(failure));
        for (const [method, params] of [
            ["info", {}],
            ["snapshot", {}],
            ["chat", turn("r1")]
        ] as const) {
            expect(await rpc.call(caller(1), method, params)).toEqual({
                ok: false,
                error: { code: "engine_start_failed", message: failure.message }
            });
        }
        expect(rpc.numTurns(1)).toBe(0);
    });

    it("keeps an engine refusal's code (context_length_exceeded) and message", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const answer = rpc.call(caller(1), "chat", turn("r1"));
        await settle();
        const refusal = { code: "context_length_exceeded", message: "This request needs 9,214 tokens; the limit is 4,096." };
        engine.turns.get("r1")!.fail(new EngineRequestError(refusal));
        expect(await answer).toEqual({ ok: false, error: refusal });
    });

    it("reports a non-Kvault failure as internal_error", async () => {
        const engine = fakeEngine();
        const broken: FakeEngine = { ...engine, info, call: () => Promise.reject(new TypeError("boom")) };
        const rpc = dispatcher(async () => broken);
        expect(await rpc.call(caller(1), "snapshot", {})).toMatchObject({
            ok: false,
            error: { code: "internal_error", message: expect.stringMatching(/boom/) }
        });
    });

    it("streams a turn's events to the window that started it, and only to it", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const alice = caller(1);
        const bob = caller(2);
        const answer = rpc.call(alice, "chat", turn("r1"));
        await settle();
        const running = engine.turns.get("r1")!;
        running.queued(2);
        running.started();
        running.text("Hi");
        running.text("!");
        running.finish(result);
        expect(await answer).toEqual({ ok: true, value: result });
        expect(alice.events).toEqual([
            { type: "queued", requestId: "r1", position: 2 },
            { type: "started", requestId: "r1" },
            { type: "text", requestId: "r1", text: "Hi" },
            { type: "text", requestId: "r1", text: "!" }
        ]);
        expect(bob.events).toEqual([]);
        expect(rpc.numTurns(1)).toBe(0);
    });

    it("lets only the window that started a turn cancel it", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const alice = caller(1);
        const answer = rpc.call(alice, "chat", turn("r1"));
        await settle();

        expect(await rpc.call(caller(2), "cancel", { requestId: "r1" })).toEqual({ ok: true, value: { cancelled: false } });
        expect(engine.turns.get("r1")!.signal.aborted).toBe(false);

        expect(await rpc.call(alice, "cancel", { requestId: "r1" })).toEqual({ ok: true, value: { cancelled: true } });
        expect(engine.turns.get("r1")!.signal.aborted).toBe(true);
        expect(await answer).toMatchObject({ ok: false, error: { code: "request_cancelled" } });
        expect(await rpc.call(alice, "cancel", { requestId: "r1" })).toEqual({ ok: true, value: { cancelled: false } });
    });

    it("refuses a requestId already running in the same window, not in another", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        void rpc.call(caller(1), "chat", turn("r1"));
        await settle();
        expect(await rpc.call(caller(1), "chat", turn("r1", "bob"))).toMatchObject({
            ok: false,
            error: { code: "invalid_request", message: expect.stringMatching(/already running/) }
        });
        expect(engine.calls).toEqual(["chat r1"]);
        void rpc.call(caller(2), "chat", turn("r2"));
        await settle();
        expect(rpc.numTurns(1)).toBe(1);
        expect(rpc.numTurns(2)).toBe(1);
    });

    it("cancels every turn of a window that closes, and none of another's", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const first = rpc.call(caller(1), "chat", turn("a1", "alice"));
        const second = rpc.call(caller(1), "chat", turn("a2", "notes"));
        const other = rpc.call(caller(2), "chat", turn("b1", "bob"));
        await settle();

        rpc.closeCaller(1);
        expect(engine.turns.get("a1")!.signal.aborted).toBe(true);
        expect(engine.turns.get("a2")!.signal.aborted).toBe(true);
        expect(engine.turns.get("b1")!.signal.aborted).toBe(false);
        expect(await first).toMatchObject({ ok: false, error: { code: "request_cancelled" } });
        expect(await second).toMatchObject({ ok: false, error: { code: "request_cancelled" } });
        expect(rpc.numTurns(1)).toBe(0);

        engine.turns.get("b1")!.finish(result);
        expect(await other).toEqual({ ok: true, value: result });
        rpc.closeCaller(1); // idempotent
    });

    it("a reloaded window (same id) starts afresh after closeCaller", async () => {
        const engine = fakeEngine();
        const rpc = dispatcher(async () => engine);
        const old = rpc.call(caller(1), "chat", turn("r1"));
        await settle();
        rpc.closeCaller(1);
        const fresh = rpc.call(caller(1), "chat", turn("r1"));
        await settle();
        expect(await old).toMatchObject({ ok: false });
        // The old turn's cleanup must not remove the new turn of the same id.
        expect(rpc.numTurns(1)).toBe(1);
        expect(await rpc.call(caller(1), "cancel", { requestId: "r1" })).toEqual({ ok: true, value: { cancelled: true } });
        expect(await fresh).toMatchObject({ ok: false, error: { code: "request_cancelled" } });
    });

    it("a turn cancelled while the engine starts never reaches it", async () => {
        const engine = fakeEngine();
        let ready!: (client: FakeEngine) => void;
        const starting = new Promise<FakeEngine>((resolve) => {
            ready = resolve;
        });
        const rpc = dispatcher(() => starting);
        const answer = rpc.call(caller(1), "chat", turn("r1"));
        await settle();
        expect(await rpc.call(caller(1), "cancel", { requestId: "r1" })).toEqual({ ok: true, value: { cancelled: true } });
        expect(await answer).toMatchObject({ ok: false, error: { code: "request_cancelled" } });
        ready(engine);
        await settle();
        expect(engine.calls).toEqual([]);
    });
});
