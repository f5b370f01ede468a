import { describe, expect, it } from "vitest";
import type { ChatTurnRequest, EngineEvent } from "../../../../contract/engineProtocol.js";
import type { CanaryReport, DrillReport, ReplaySummary } from "../../../../contract/isolation.js";
import { EngineCommandServer, type ServedEngine } from "../../../../engine/process/EngineCommandServer.js";
import type { EngineTransport } from "../../../../engine/process/EngineTransport.js";
import { UnknownDrillError } from "../../../../engine/drills/runFaultDrill.js";
import { ReplayUnavailableError } from "../../../../engine/KvEngine.js";
import { RequestCancelledError } from "../../../../engine/request/requestErrors.js";
import type { TurnEvent } from "../../../../contract/turnEvents.js";
import type { TurnListener, TurnResult } from "../../../../engine/service/EngineService.js";

const usage = { promptTokens: 3, cachedPromptTokens: 0, evaluatedPromptTokens: 3, completionTokens: 2 };

const call = (callId: string, method: string, params: unknown = {}): Record<string, unknown> => ({ type: "call", callId, method, params });

function chat(requestId: string): Record<string, unknown> {
    return {
        type: "chat",
        request: { requestId, workspace: "alice", messages: [{ role: "user", content: "Hi" }], sampling: { temperature: 0, maxTokens: 2 } }
    };
}

/** Chats that run until the test finishes them or their signal aborts. */
class FakeEngine implements ServedEngine {
    readonly running = new Map<string, { listener: TurnListener; finish(text: string): void }>();
    numDisposes = 0;
    runningAtDispose = -1;

    chat(request: ChatTurnRequest, listener: TurnListener = () => undefined, signal?: AbortSignal): Promise<TurnResult> {
        return new Promise((resolve, reject) => {
            this.running.set(request.requestId, { listener, finish: (text) => resolve({ text, finishReason: "length", usage }) });
            signal?.addEventListener("abort", () => reject(new RequestCancelledError("decode")), { once: true });
        }).finally(() => this.running.delete(request.requestId)) as Promise<TurnResult>;
    }

    measure(): never {
        throw new Error("measure exploded");
    }

    forgotten: string[] = [];

    snapshot(): never {
        return { numQueued: 0 } as never;
    }

    kvHolders(): never {
        return { at: 0, roles: [], sequences: [], bytesPerToken: 0, pool: { numPages: 0, numFreePages: 0, pageBytes: 0 } } as never;
    }

    workspaceTokensPerSecond(): { workspace: string; tokensPerSecond: number }[] {
        return [];
    }

    async vramState(): Promise<undefined> {
        return undefined;
    }

    async forgetWorkspace(workspace: string): Promise<void> {
        this.forgotten.push(workspace);
    }

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

    embed(): never {
        throw new Error("embed exploded");
    }

    tokenize(): never {
        throw new Error("tokenize exploded");
    }

    tokenizeChat(): never {
        throw new Error("tokenizeChat exploded");
    }
    detokenize(): never {
        throw new Error("detokenize exploded");
    }

    memoryEvents(): never {
        throw new Error("memoryEvents exploded");
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
    it("streams a chat's events under its requestId, each as the service gave it, and finishes it", async () => {
        const { server, engine, sent } = serve();
        server.handle(chat("r1"));
        const events: TurnEvent[] = [
            { type: "queued", requestId: "r1", position: 1 },
            { type: "started", requestId: "r1" },
            { type: "text", requestId: "r1", text: "He" }
        ];
        for (const event of events) {
            void engine.running.get("r1")!.listener(event);
        }
        engine.running.get("r1")!.finish("He");
        await tick();
        expect(sent).toEqual([
            { type: "queued", requestId: "r1", position: 1 },
            { type: "started", requestId: "r1" },
            { type: "text", requestId: "r1", text: "He" },
            { type: "finished", requestId: "r1", text: "He", finishReason: "length", usage }
        ]);
        // sent as they are: no conversion between the service and the host
        expect(sent.slice(0, 3).every((message, index) => message === events[index])).toBe(true);
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

    it("never answers in the name of a running chat: a duplicate, or another command reusing its id, gets only a log line", async () => {
        const { server, engine, sent, logged } = serve();
        server.handle(chat("r1"));
        server.handle(chat("r1"));
        server.handle({ type: "chat", request: { requestId: "r1", workspace: 3 } });
        await tick();
        expect(sent).toEqual([]);
        expect(engine.running.size).toBe(1);
        expect(logged).toEqual(['ignored a chat: request "r1" is already running.', 'ignored a chat: request "r1" is already running.']);
    });

    it("answers an envelope it cannot serve but can address, and a call whose engine method throws, without throwing itself", async () => {
        const { server, sent, logged } = serve();
        server.handle(call("c0", "inspectModel", { path: "/m.gguf" }));
        server.handle({ type: "measure", callId: "c9" });
        server.handle(call("c1", "measure", { workspace: "alice", messages: [], draft: "x" }));
        server.handle(call("c2", "snapshot"));
        await tick();
        expect(sent).toEqual([
            {
                type: "answer",
                callId: "c0",
                error: {
                    code: "invalid_request",
                    message:
                        'The call\'s method is "inspectModel"; the engine serves measure, snapshot, memoryEvents, forgetWorkspace, audit, replayableTurns, replay, listDrills, runDrill, runCanary, embed, ping, resourceUse, tokenize, tokenizeChat, detokenize.'
                }
            },
            { type: "answer", callId: "c1", error: { code: "engine_internal_error", message: expect.stringMatching(/measure exploded/) } },
            { type: "answer", callId: "c2", result: { numQueued: 0 } }
        ]);
        expect(logged).toEqual([
            expect.stringMatching(/^refused a command: The call's method is "inspectModel"/),
            'refused a command: The command\'s type is "measure"; expected one of chat, cancel, call, shutdown.'
        ]);
    });

    it("hands a call's params to the engine as the host's RPC spec checked them: the engine does not check them again", async () => {
        const { server, engine, sent } = serve();
        server.handle(call("f1", "forgetWorkspace", { workspace: "alice" }));
        server.handle(call("k1", "runCanary", { fillerTokens: 300 }));
        await tick();
        expect(engine.forgotten).toEqual(["alice"]);
        expect([...engine.slow.keys()]).toEqual(["canary 300"]);
        expect(sent).toEqual([{ type: "answer", callId: "f1", result: {} }]);
    });

    it("answers the isolation calls by callId, each when it settles, and a failure with its code", async () => {
        const { server, engine, sent } = serve();
        server.handle(call("a1", "audit"));
        server.handle(call("a2", "replayableTurns"));
        server.handle(call("a3", "listDrills"));
        server.handle(call("a4", "replay", { requestId: "r0" }));
        server.handle(call("a5", "replay", { requestId: "gone" }));
        server.handle(call("a6", "runDrill", { id: "flipped-byte" }));
        server.handle(call("a7", "runDrill", { id: "no-such-drill" }));
        await tick();
        engine.slow.get("replay r0")!.finish({ requestId: "r0", numTokens: 2, identical: true, durationMs: 1 });
        engine.slow.get("drill flipped-byte")!.finish({ id: "flipped-byte", guardFired: true });
        await tick();
        expect(sent).toEqual([
            { type: "answer", callId: "a1", result: { ok: true, numViolations: 0 } },
            { type: "answer", callId: "a2", result: [{ requestId: "r0", workspace: "alice", numTokens: 2 }] },
            {
                type: "answer",
                callId: "a3",
                error: { code: "engine_internal_error", message: expect.stringMatching(/listDrills exploded/) }
            },
            { type: "answer", callId: "a5", error: { code: "replay_unavailable", message: "Turn gone cannot be replayed." } },
            { type: "answer", callId: "a7", error: { code: "unknown_drill", message: 'There is no drill "no-such-drill".' } },
            { type: "answer", callId: "a4", result: { requestId: "r0", numTokens: 2, identical: true, durationMs: 1 } },
            { type: "answer", callId: "a6", result: { id: "flipped-byte", guardFired: true } }
        ]);
    });

    it("answers a canary run once it ends, with its filler's size passed through", async () => {
        const { server, engine, sent } = serve();
        server.handle(call("k1", "runCanary"));
        server.handle(call("k2", "runCanary", { fillerTokens: 300 }));
        await tick();
        expect(sent).toEqual([]);
        engine.slow.get("canary 300")!.finish({ passed: true });
        engine.slow.get("canary default")!.finish({ passed: false });
        await tick();
        expect(sent).toEqual([
            { type: "answer", callId: "k2", result: { passed: true } },
            { type: "answer", callId: "k1", result: { passed: false } }
        ]);
    });

    it("waits for a drill in flight before it disposes the engine under it, and refuses new isolation calls while stopping", async () => {
        const { server, engine, sent } = serve();
        server.handle(call("d1", "runDrill", { id: "flipped-byte" }));
        const stopped = server.stop();
        server.handle(call("d2", "audit"));
        server.handle(call("d3", "runDrill", { id: "flipped-byte" }));
        await tick();
        expect(engine.numDisposes).toBe(0);
        engine.slow.get("drill flipped-byte")!.finish({ id: "flipped-byte", guardFired: true });
        await stopped;
        expect(engine.numDisposes).toBe(1);
        expect(
            sent.map((event) => [event.type, (event as { callId: string }).callId, (event as { error?: { code: string } }).error?.code])
        ).toEqual([
            ["answer", "d2", "engine_stopped"],
            ["answer", "d3", "engine_stopped"],
            ["answer", "d1", undefined]
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
        server.handle(call("c9", "forgetWorkspace", { workspace: "alice" }));
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
            ["answer", "c9", "engine_stopped"]
        ]);
    });
});
