import { describe, expect, it } from "vitest";
import type { ChatTurnRequest, EngineEvent } from "../../../contract/engineProtocol.js";
import type { CanaryReport, DrillReport, ReplaySummary } from "../../../contract/isolation.js";
import { EngineCommandServer, type ServedEngine } from "../../../engine/process/EngineCommandServer.js";
import type { EngineTransport } from "../../../engine/process/EngineTransport.js";
import { UnknownDrillError } from "../../../engine/drills/runFaultDrill.js";
import { ReplayUnavailableError } from "../../../engine/KvEngine.js";
import { RequestCancelledError } from "../../../engine/request/requestErrors.js";
import type { TurnCallbacks, TurnResult } from "../../../engine/service/EngineService.js";

const usage = { promptTokens: 3, cachedPromptTokens: 0, evaluatedPromptTokens: 3, completionTokens: 2 };

function chat(requestId: string): Record<string, unknown> {
    return {
        type: "chat",
        request: { requestId, workspace: "alice", messages: [{ role: "user", content: "Hi" }], sampling: { temperature: 0, maxTokens: 2 } }
    };
}

/** Chats that run until the test finishes them or their signal aborts. */
class FakeEngine implements ServedEngine {
    readonly running = new Map<string, { callbacks: TurnCallbacks; finish(text: string): void }>();
    numDisposes = 0;
    runningAtDispose = -1;

    chat(request: ChatTurnRequest, callbacks: TurnCallbacks = {}, signal?: AbortSignal): Promise<TurnResult> {
        return new Promise((resolve, reject) => {
            this.running.set(request.requestId, { callbacks, finish: (text) => resolve({ text, finishReason: "length", usage }) });
            signal?.addEventListener("abort", () => reject(new RequestCancelledError("decode")), { once: true });
        }).finally(() => this.running.delete(request.requestId)) as Promise<TurnResult>;
    }

    measure(): never {
        throw new Error("measure exploded");
    }

    snapshot(): never {
        return { numQueued: 0 } as never;
    }

    async forgetWorkspace(): Promise<void> {}

    audit(): never {
        return { ok: true, numViolations: 0 } as never;
    }

    replayableTurns(): never {
        return [{ requestId: "r0", workspace: "alice", numTokens: 2 }] as never;
    }

    /** Drills and replays that run until the test settles them. */
    readonly slow = new Map<string, { finish(value: unknown): void }>();

    replay(requestId: string): Promise<ReplaySummary> {
        if (requestId !== "r0") {
            return Promise.reject(new ReplayUnavailableError(`Turn ${requestId} cannot be replayed.`));
        }
        return new Promise((resolve) => this.slow.set(`replay ${requestId}`, { finish: resolve as (value: unknown) => void }));
    }

    listDrills(): never {
        throw new Error("listDrills exploded");
    }

    runDrill(id: string): Promise<DrillReport> {
        if (id !== "flipped-byte") {
            throw new UnknownDrillError(`There is no drill "${id}".`);
        } // synchronously, on purpose
        return new Promise((resolve) => this.slow.set(`drill ${id}`, { finish: resolve as (value: unknown) => void }));
    }

    runCanary(params: { fillerTokens?: number }): Promise<CanaryReport> {
        return new Promise((resolve) =>
            this.slow.set(`canary ${params.fillerTokens ?? "default"}`, { finish: resolve as (value: unknown) => void })
        );
    }

    async dispose(): Promise<void> {
        this.numDisposes++;
        this.runningAtDispose = this.running.size;
    }
}

function serve(): { server: EngineCommandServer; engine: FakeEngine; sent: EngineEvent[]; logged: string[]; shutdowns: number[] } {
    const engine = new FakeEngine();
    const sent: EngineEvent[] = [];
    const logged: string[] = [];
    const shutdowns: number[] = [];
    const transport: EngineTransport = {
        kind: "fork",
        onMessage: () => undefined,
        send: async (event) => {
            sent.push(event);
        },
        onHostGone: () => undefined
    };
    const server = new EngineCommandServer(engine, transport, { log: (line) => logged.push(line), onShutdown: () => shutdowns.push(1) });
    return { server, engine, sent, logged, shutdowns };
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe("EngineCommandServer", () => {
    it("streams a chat's events under its requestId and finishes it", async () => {
        const { server, engine, sent } = serve();
        server.handle(chat("r1"));
        engine.running.get("r1")!.callbacks.onQueued?.(1);
        engine.running.get("r1")!.callbacks.onStarted?.();
        engine.running.get("r1")!.callbacks.onText?.("He");
        engine.running.get("r1")!.finish("He");
        await tick();
        expect(sent).toEqual([
            { type: "queued", requestId: "r1", position: 1 },
            { type: "started", requestId: "r1" },
            { type: "token", requestId: "r1", text: "He" },
            { type: "finished", requestId: "r1", text: "He", finishReason: "length", usage }
        ]);
        expect(server.numRunning).toBe(0);
    });

    it("cancels by requestId; the engine's error goes back with its code", async () => {
        const { server, sent } = serve();
        server.handle(chat("r1"));
        server.handle({ type: "cancel", requestId: "r1" });
        await tick();
        expect(sent).toEqual([
            {
                type: "failed",
                requestId: "r1",
                error: { code: "request_cancelled", message: expect.stringMatching(/cancelled during decode/) }
            }
        ]);
    });

    it("never answers in the name of a running chat: a duplicate or a malformed command reusing its id gets only a log line", async () => {
        const { server, engine, sent, logged } = serve();
        server.handle(chat("r1"));
        server.handle(chat("r1"));
        server.handle({ type: "chat", request: { requestId: "r1", workspace: 3 } });
        await tick();
        expect(sent).toEqual([]);
        expect(engine.running.size).toBe(1);
        expect(logged).toEqual(['ignored a chat: request "r1" is already running.', "refused a command: workspace must be a string."]);
    });

    it("answers a malformed command it can address, and a call whose engine method throws, without throwing itself", async () => {
        const { server, sent } = serve();
        server.handle({ type: "chat", request: { requestId: "r2" } });
        server.handle({ type: "measure", callId: "c1", workspace: "alice", messages: [], draft: "x" });
        server.handle({ type: "snapshot", callId: "c2" });
        await tick();
        expect(sent).toEqual([
            { type: "failed", requestId: "r2", error: { code: "invalid_request", message: "workspace must be a string." } },
            {
                type: "measured",
                callId: "c1",
                error: { code: "engine_internal_error", message: expect.stringMatching(/measure exploded/) }
            },
            { type: "snapshot", callId: "c2", snapshot: { numQueued: 0 } }
        ]);
    });

    it("answers the isolation calls by callId, with each its own event type, and a failure with its code", async () => {
        const { server, engine, sent } = serve();
        server.handle({ type: "audit", callId: "a1" });
        server.handle({ type: "replayableTurns", callId: "a2" });
        server.handle({ type: "listDrills", callId: "a3" });
        server.handle({ type: "replay", callId: "a4", requestId: "r0" });
        server.handle({ type: "replay", callId: "a5", requestId: "gone" });
        server.handle({ type: "runDrill", callId: "a6", drillId: "flipped-byte" });
        server.handle({ type: "runDrill", callId: "a7", drillId: "no-such-drill" });
        server.handle({ type: "runDrill", callId: "a8", drillId: "" });
        await tick();
        engine.slow.get("replay r0")!.finish({ requestId: "r0", numTokens: 2, identical: true, durationMs: 1 });
        engine.slow.get("drill flipped-byte")!.finish({ id: "flipped-byte", guardFired: true });
        await tick();
        expect(sent).toEqual([
            { type: "replayableTurns", callId: "a2", result: [{ requestId: "r0", workspace: "alice", numTokens: 2 }] },
            {
                type: "drills",
                callId: "a3",
                error: { code: "engine_internal_error", message: expect.stringMatching(/listDrills exploded/) }
            },
            { type: "drillReport", callId: "a8", error: { code: "invalid_request", message: "drillId is empty." } },
            { type: "audited", callId: "a1", result: { ok: true, numViolations: 0 } }, // an audit scans in slices: it answers later
            { type: "replayed", callId: "a5", error: { code: "replay_unavailable", message: "Turn gone cannot be replayed." } },
            { type: "drillReport", callId: "a7", error: { code: "unknown_drill", message: 'There is no drill "no-such-drill".' } },
            { type: "replayed", callId: "a4", result: { requestId: "r0", numTokens: 2, identical: true, durationMs: 1 } },
            { type: "drillReport", callId: "a6", result: { id: "flipped-byte", guardFired: true } }
        ]);
    });

    it("answers a canary run with canaryReport once it ends, with its filler's size passed through", async () => {
        const { server, engine, sent } = serve();
        server.handle({ type: "runCanary", callId: "k1" });
        server.handle({ type: "runCanary", callId: "k2", fillerTokens: 300 });
        server.handle({ type: "runCanary", callId: "k3", fillerTokens: "lots" });
        await tick();
        expect(sent).toEqual([
            {
                type: "canaryReport",
                callId: "k3",
                error: { code: "invalid_request", message: 'fillerTokens must be a whole number of at least 1; got "lots".' }
            }
        ]);
        engine.slow.get("canary 300")!.finish({ passed: true });
        engine.slow.get("canary default")!.finish({ passed: false });
        await tick();
        expect(sent.slice(1)).toEqual([
            { type: "canaryReport", callId: "k2", result: { passed: true } },
            { type: "canaryReport", callId: "k1", result: { passed: false } }
        ]);
    });

    it("waits for a drill in flight before it disposes the engine under it, and refuses new isolation calls while stopping", async () => {
        const { server, engine, sent } = serve();
        server.handle({ type: "runDrill", callId: "d1", drillId: "flipped-byte" });
        const stopped = server.stop();
        server.handle({ type: "audit", callId: "d2" });
        server.handle({ type: "runDrill", callId: "d3", drillId: "flipped-byte" });
        await tick();
        expect(engine.numDisposes).toBe(0);
        engine.slow.get("drill flipped-byte")!.finish({ id: "flipped-byte", guardFired: true });
        await stopped;
        expect(engine.numDisposes).toBe(1);
        expect(
            sent.map((event) => [event.type, (event as { callId: string }).callId, (event as { error?: { code: string } }).error?.code])
        ).toEqual([
            ["audited", "d2", "engine_stopped"],
            ["drillReport", "d3", "engine_stopped"],
            ["drillReport", "d1", undefined]
        ]);
    });

    it("stops by cancelling running chats first, reports them as engine_stopped, then disposes; later commands are refused", async () => {
        const { server, engine, sent, shutdowns } = serve();
        server.handle(chat("r1"));
        server.handle({ type: "shutdown" });
        expect(shutdowns).toEqual([1]);
        await Promise.all([server.stop(), server.stop()]);
        expect(engine.numDisposes).toBe(1);
        expect(engine.runningAtDispose).toBe(0);
        server.handle(chat("r3"));
        server.handle({ type: "forgetWorkspace", callId: "c9", workspace: "alice" });
        await tick();
        expect(
            sent.map((event) => [
                event.type,
                "requestId" in event ? event.requestId : (event as { callId: string }).callId,
                (event as { error?: { code: string } }).error?.code
            ])
        ).toEqual([
            ["failed", "r1", "engine_stopped"],
            ["failed", "r3", "engine_stopped"],
            ["forgotten", "c9", "engine_stopped"]
        ]);
    });
});
