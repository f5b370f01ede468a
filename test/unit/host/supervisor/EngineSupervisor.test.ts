import { afterEach, describe, expect, it } from "vitest";
import type { EngineCommand, EngineEvent, EngineInfo } from "../../../../contract/engineProtocol.js";
import type { ModelFacts } from "../../../../contract/models.js";
import {
    EngineCrashedError,
    EngineRequestError,
    EngineStartError,
    type EngineUnavailableError
} from "../../../../host/supervisor/engineHostErrors.js";
import type { EngineChildProcess, EngineProcessSpawner } from "../../../../host/supervisor/EngineProcessSpawner.js";
import { ModelNotGgufError, ModelSwitchedError } from "../../../../host/models/modelErrors.js";
import { EngineSupervisor, type EngineSupervisorOptions } from "../../../../host/supervisor/EngineSupervisor.js";

const info = { modelName: "fake" } as EngineInfo;
const turn = {
    requestId: "r1",
    workspace: "alice",
    messages: [{ role: "user", content: "Hi" }],
    sampling: { temperature: 0, maxTokens: 4 }
} as const;

/** An engine process the test drives by hand: it records commands and emits what the test says. */
class FakeEngineProcess implements EngineChildProcess {
    readonly sent: EngineCommand[] = [];
    readonly killSignals: string[] = [];
    #onMessage: (message: unknown) => void = () => undefined;
    #onExit: (code: number | null, signal: NodeJS.Signals | null) => void = () => undefined;
    exited = false;

    constructor(
        readonly pid: number,
        private readonly behaviour: { readyOnSpawn: boolean; exitOnShutdown: boolean }
    ) {
        if (behaviour.readyOnSpawn) {
            queueMicrotask(() => this.emit({ type: "ready", info: { ...info, modelName: `fake ${pid}` } }));
        }
    }

    send(command: EngineCommand): void {
        this.sent.push(command);
        if (command.type === "shutdown" && this.behaviour.exitOnShutdown) {
            setTimeout(() => this.exit(0, null), 1);
        }
    }

    on(event: "message" | "exit", listener: never): void {
        if (event === "message") {
            this.#onMessage = listener;
        } else {
            this.#onExit = listener;
        }
    }

    kill(signal: NodeJS.Signals = "SIGTERM"): void {
        this.killSignals.push(signal);
        setTimeout(() => this.exit(null, signal), 1);
    }

    recentOutput(): string {
        return "Error: something native went wrong";
    }

    emit(event: EngineEvent | Record<string, unknown>): void {
        this.#onMessage(event);
    }

    exit(code: number | null, signal: NodeJS.Signals | null): void {
        if (this.exited) {
            return;
        }
        this.exited = true;
        this.#onExit(code, signal);
    }

    lastSent<T extends EngineCommand["type"]>(type: T): Extract<EngineCommand, { type: T }> {
        const command = this.sent.findLast((item) => item.type === type);
        if (command === undefined) {
            throw new Error(`no ${type} command sent; sent: ${this.sent.map((item) => item.type).join(", ")}`);
        }
        return command as Extract<EngineCommand, { type: T }>;
    }

    /** The last `call` of `method` sent. */
    lastCall(method: string): Extract<EngineCommand, { type: "call" }> {
        const command = this.sent.findLast((item) => item.type === "call" && item.method === method);
        if (command === undefined) {
            throw new Error(`no ${method} call sent; sent: ${this.sent.map((item) => item.type).join(", ")}`);
        }
        return command as Extract<EngineCommand, { type: "call" }>;
    }

    /** Answers the last `call` of `method`. */
    answer(method: string, answer: { result?: unknown; error?: { code: string; message: string } }): void {
        this.emit({ type: "answer", callId: this.lastCall(method).callId, ...answer });
    }
}

class FakeSpawner implements EngineProcessSpawner {
    readonly processes: FakeEngineProcess[] = [];
    readyOnSpawn = true;
    exitOnShutdown = true;

    readonly modelPaths: string[] = [];

    spawnEngineProcess(config: { modelPath: string }): EngineChildProcess {
        this.modelPaths.push(config.modelPath);
        const child = new FakeEngineProcess(1000 + this.processes.length, {
            readyOnSpawn: this.readyOnSpawn,
            exitOnShutdown: this.exitOnShutdown
        });
        this.processes.push(child);
        return child;
    }

    get last(): FakeEngineProcess {
        return this.processes.at(-1)!;
    }
}

const supervisors: EngineSupervisor[] = [];

async function start(spawner: FakeSpawner, options: EngineSupervisorOptions = {}): Promise<EngineSupervisor> {
    const supervisor = await EngineSupervisor.start(
        { modelPath: "/fake.gguf" },
        { spawner, log: () => undefined, restartBackoffMs: 1, ...options }
    );
    supervisors.push(supervisor);
    return supervisor;
}

function nextEvent<K extends "crashed" | "restarted" | "down">(supervisor: EngineSupervisor, event: K): Promise<unknown> {
    return new Promise((resolve) => {
        const off = supervisor.on(event, (payload) => {
            off();
            resolve(payload);
        });
    });
}

afterEach(async () => {
    await Promise.all(supervisors.splice(0).map((supervisor) => supervisor.dispose()));
});

describe("EngineSupervisor.start", () => {
    it("resolves once the engine says ready, with its info", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        expect(supervisor.info.modelName).toBe("fake 1000");
        expect(supervisor.pid).toBe(1000);
        expect(supervisor.state).toBe("running");
    });

    it("rejects with the engine's own reason when it reports startFailed, once the process is gone", async () => {
        const spawner = new FakeSpawner();
        spawner.readyOnSpawn = false;
        const starting = start(spawner);
        spawner.last.emit({
            type: "startFailed",
            error: { code: "invalid_engine_config", message: "window is -3; it must be a whole number of at least 1." }
        });
        expect(spawner.last.exited).toBe(false);
        spawner.last.exit(1, null);
        const error = (await starting.catch((caught: unknown) => caught)) as EngineStartError;
        expect(error).toBeInstanceOf(EngineStartError);
        expect(error.code).toBe("engine_start_failed");
        expect(error.message).toBe("The engine could not start: window is -3; it must be a whole number of at least 1.");
        expect(error.reason?.code).toBe("invalid_engine_config");
    });

    it("quotes the process's last stderr when it exits before ready without a word", async () => {
        const spawner = new FakeSpawner();
        spawner.readyOnSpawn = false;
        const starting = start(spawner);
        spawner.last.exit(null, "SIGSEGV");
        await expect(starting).rejects.toThrow(
            "The engine process exited (SIGSEGV) before it was ready. Its last output:\nError: something native went wrong"
        );
    });

    it("kills a process that is not ready in time, and says so", async () => {
        const spawner = new FakeSpawner();
        spawner.readyOnSpawn = false;
        await expect(start(spawner, { startTimeoutMs: 20 })).rejects.toThrow(/did not become ready within 0.02 s, so it was stopped/);
        expect(spawner.last.killSignals).toEqual(["SIGKILL"]);
        expect(spawner.last.exited).toBe(true);
    });
});

describe("EngineSupervisor routes a turn's events and calls' answers by id", () => {
    it("streams queued, started and text, then resolves with the result", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const seen: string[] = [];
        const result = supervisor.chat(turn, {
            onQueued: (position) => seen.push(`queued ${position}`),
            onStarted: () => seen.push("started"),
            onText: (text) => seen.push(`text ${text}`)
        });
        await Promise.resolve();
        expect(spawner.last.lastSent("chat").request.requestId).toBe("r1");
        const child = spawner.last;
        child.emit({ type: "queued", requestId: "r1", position: 2 });
        child.emit({ type: "started", requestId: "r1" });
        child.emit({ type: "token", requestId: "r1", text: "Hel" });
        child.emit({ type: "token", requestId: "other", text: "not mine" });
        child.emit({ type: "token", requestId: "r1", text: "lo" });
        const usage = { promptTokens: 5, cachedPromptTokens: 0, evaluatedPromptTokens: 5, completionTokens: 2 };
        child.emit({ type: "finished", requestId: "r1", text: "Hello", finishReason: "length", usage });
        await expect(result).resolves.toEqual({ text: "Hello", finishReason: "length", usage });
        expect(seen).toEqual(["queued 2", "started", "text Hel", "text lo"]);
    });

    it("rejects with the engine's code when it reports failed", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const result = supervisor.chat(turn);
        await Promise.resolve();
        spawner.last.emit({
            type: "failed",
            requestId: "r1",
            error: { code: "context_length_exceeded", message: "This request needs 300 tokens" }
        });
        const error = (await result.catch((caught: unknown) => caught)) as EngineRequestError;
        expect(error).toBeInstanceOf(EngineRequestError);
        expect(error.code).toBe("context_length_exceeded");
    });

    it("refuses a requestId already running (the turn's fields were checked where it entered the host)", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        void supervisor.chat(turn).catch(() => undefined);
        await Promise.resolve();
        await expect(supervisor.chat(turn)).rejects.toMatchObject({
            code: "invalid_request",
            message: expect.stringMatching(/already running/)
        });
        expect(spawner.last.sent.filter((command) => command.type === "chat")).toHaveLength(1);
    });

    it("sends cancel when the caller aborts, and never sends a turn aborted before it left", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const controller = new AbortController();
        const result = supervisor.chat(turn, {}, controller.signal);
        await Promise.resolve();
        controller.abort();
        expect(spawner.last.lastSent("cancel")).toEqual({ type: "cancel", requestId: "r1" });
        spawner.last.emit({
            type: "failed",
            requestId: "r1",
            error: { code: "request_cancelled", message: "The request was cancelled during decode." }
        });
        await expect(result).rejects.toMatchObject({ code: "request_cancelled" });
        await expect(supervisor.chat({ ...turn, requestId: "r2" }, {}, AbortSignal.abort())).rejects.toMatchObject({
            code: "request_cancelled"
        });
        expect(spawner.last.sent.filter((command) => command.type === "chat")).toHaveLength(1);
    });

    it("sends measure, snapshot and forgetWorkspace as calls, answers them by callId, and times out a call nobody answers", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner, { callTimeoutsMs: { snapshot: 50 } });
        const measured = supervisor.call("measure", { workspace: "alice", messages: [], draft: "draft" });
        await Promise.resolve();
        expect(spawner.last.lastCall("measure")).toEqual({
            type: "call",
            callId: expect.stringMatching(/^call-/),
            method: "measure",
            params: { workspace: "alice", messages: [], draft: "draft" }
        });
        const result = { workspace: "alice", draftTokens: 3, usedTokens: 0, limit: 256, remainingTokens: 253, fits: true };
        spawner.last.answer("measure", { result });
        await expect(measured).resolves.toEqual(result);

        const forgotten = supervisor.call("forgetWorkspace", { workspace: "alice" });
        await Promise.resolve();
        spawner.last.answer("forgetWorkspace", { error: { code: "engine_busy", message: "busy" } });
        await expect(forgotten).rejects.toMatchObject({ code: "engine_busy" });

        await expect(supervisor.call("snapshot", {})).rejects.toMatchObject({
            code: "engine_timeout",
            message: expect.stringMatching(/did not answer a snapshot call within 0.05 s/)
        });
    });
});

describe("EngineSupervisor's isolation calls", () => {
    it("sends audit, replayableTurns, replay, listDrills and runDrill each with its own callId and resolves each with its answer's result", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const child = spawner.last;
        const answer = async <T>(call: Promise<T>, method: string, result: unknown): Promise<T> => {
            await Promise.resolve();
            child.answer(method, { result });
            return call;
        };
        const audit = {
            ok: true,
            violations: [],
            numViolations: 0,
            numPagesChecked: 48,
            numSealedPagesVerified: 3,
            numFreePagesScanned: 45,
            durationMs: 1,
            at: 2
        };
        expect(await answer(supervisor.call("audit", {}), "audit", audit)).toEqual(audit);
        const turns = [{ requestId: "r1", workspace: "alice", numTokens: 5 }];
        expect(await answer(supervisor.call("replayableTurns", {}), "replayableTurns", turns)).toEqual(turns);
        const replay = { requestId: "r1", numTokens: 5, identical: true, durationMs: 40 };
        expect(await answer(supervisor.call("replay", { requestId: "r1" }), "replay", replay)).toEqual(replay);
        expect(child.lastCall("replay")).toEqual({
            type: "call",
            method: "replay",
            params: { requestId: "r1" },
            callId: expect.stringMatching(/^call-/)
        });
        const drills = [{ id: "flipped-byte", title: "A byte flips", failureModes: ["flipped-byte"], guard: "checksums" }];
        expect(await answer(supervisor.call("listDrills", {}), "listDrills", drills)).toEqual(drills);
        const report = {
            ...drills[0],
            guardFired: true,
            guardError: { code: "handoff_checksum_mismatch", message: "…" },
            victimClean: true,
            leakObservedWithGuardOff: true,
            leakEvidence: "…",
            durationMs: 9_000
        };
        expect(await answer(supervisor.call("runDrill", { id: "flipped-byte" }), "runDrill", report)).toEqual(report);
        expect(child.lastCall("runDrill")).toMatchObject({ method: "runDrill", params: { id: "flipped-byte" } });
        expect(
            new Set(child.sent.filter((command) => "callId" in command).map((command) => (command as { callId: string }).callId)).size
        ).toBe(5);
    });

    it("rejects with the engine's code (replay_unavailable, unknown_drill)", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const replay = supervisor.call("replay", { requestId: "gone" });
        const drill = supervisor.call("runDrill", { id: "no-such-drill" });
        await Promise.resolve();
        spawner.last.answer("replay", { error: { code: "replay_unavailable", message: "Turn gone cannot be replayed." } });
        spawner.last.answer("runDrill", { error: { code: "unknown_drill", message: "There is no drill." } });
        await expect(replay).rejects.toMatchObject({ code: "replay_unavailable", message: "Turn gone cannot be replayed." });
        await expect(drill).rejects.toMatchObject({ code: "unknown_drill" });
    });

    it("gives each call its own deadline: the RPC spec's, or the one the options give that method", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner, { callTimeoutsMs: { audit: 20, listDrills: 20, replayableTurns: 20, replay: 200 } });
        const drill = supervisor.call("runDrill", { id: "flipped-byte" }).catch((error: unknown) => error);
        const replay = supervisor.call("replay", { requestId: "r1" }).catch((error: unknown) => error);
        await expect(supervisor.call("audit", {})).rejects.toMatchObject({
            code: "engine_timeout",
            message: expect.stringMatching(/did not answer an audit call within 0.02 s/)
        });
        await expect(supervisor.call("listDrills", {})).rejects.toMatchObject({ code: "engine_timeout" });
        await expect(supervisor.call("replayableTurns", {})).rejects.toMatchObject({ code: "engine_timeout" });
        // The quick calls timed out; the drill (the spec's 120 s) and the replay are still waiting, and the drill is answered.
        spawner.last.answer("runDrill", { result: { id: "flipped-byte" } });
        expect(await drill).toEqual({ id: "flipped-byte" });
        expect(await replay).toMatchObject({
            code: "engine_timeout",
            message: expect.stringMatching(/did not answer a replay call within 0.2 s/)
        });
    });

    it("rejects a drill in flight with engine_crashed when the engine dies under it", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const drill = supervisor.call("runDrill", { id: "late-write" });
        await Promise.resolve();
        spawner.readyOnSpawn = false;
        spawner.last.exit(null, "SIGSEGV");
        await expect(drill).rejects.toMatchObject({ code: "engine_crashed", message: expect.stringMatching(/before it answered/) });
    });
});

describe("EngineSupervisor after a crash", () => {
    it("rejects what was in flight with engine_crashed, restarts, and lets a call made meanwhile wait for the new engine", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const inFlight = supervisor.chat(turn);
        const call = supervisor.call("snapshot", {});
        await Promise.resolve();
        spawner.readyOnSpawn = false;
        const crashed = nextEvent(supervisor, "crashed");
        spawner.last.exit(null, "SIGKILL");

        const error = (await inFlight.catch((caught: unknown) => caught)) as EngineCrashedError;
        expect(error).toBeInstanceOf(EngineCrashedError);
        expect(error.message).toBe(
            "The engine process stopped (SIGKILL) while this turn ran. It restarts by itself; send your message again — your chat history is kept."
        );
        await expect(call).rejects.toMatchObject({ code: "engine_crashed", message: expect.stringMatching(/before it answered/) });
        expect(await crashed).toEqual({ pid: 1000, exitCode: null, signal: "SIGKILL", numInterrupted: 2, willRestart: true });
        expect(supervisor.state).toBe("restarting");

        const waiting = supervisor.chat({ ...turn, requestId: "r2" });
        await new Promise((resolve) => setTimeout(resolve, 10));
        expect(spawner.processes).toHaveLength(2);
        expect(spawner.last.sent).toEqual([]);
        const restarted = nextEvent(supervisor, "restarted");
        spawner.last.emit({ type: "ready", info });
        expect(await restarted).toMatchObject({ pid: 1001, numRestarts: 1 });
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(spawner.last.lastSent("chat").request.requestId).toBe("r2");
        spawner.last.emit({
            type: "finished",
            requestId: "r2",
            text: "ok",
            finishReason: "stop",
            usage: { promptTokens: 1, cachedPromptTokens: 0, evaluatedPromptTokens: 1, completionTokens: 1 }
        });
        await expect(waiting).resolves.toMatchObject({ text: "ok" });
        expect(supervisor.pid).toBe(1001);
    });

    it("bounds how long a call waits for the restart", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner, { restartWaitMs: 30 });
        spawner.readyOnSpawn = false;
        spawner.last.exit(1, null);
        await expect(supervisor.call("measure", { workspace: "alice", messages: [], draft: "" })).rejects.toMatchObject({
            code: "engine_unavailable",
            message: "The engine is restarting and was not back within 0.03 s. Try again in a moment."
        });
    });

    it("stops restarting once the budget is spent, and every call then fails with why", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner, { maxRestarts: 2, restartWindowMs: 60_000 });
        for (let crash = 0; crash < 2; crash++) {
            const restarted = nextEvent(supervisor, "restarted");
            spawner.last.exit(null, "SIGSEGV");
            await restarted;
        }
        const down = nextEvent(supervisor, "down");
        const crashed = nextEvent(supervisor, "crashed");
        spawner.last.exit(null, "SIGSEGV");
        expect(await crashed).toMatchObject({ willRestart: false });
        const { error } = (await down) as { error: EngineUnavailableError };
        expect(error.message).toBe(
            "The engine process stopped again (SIGSEGV) after 2 restarts within 60 s, so Kvault stopped restarting it. Check the model and engine settings, then restart Kvault."
        );
        expect(supervisor.state).toBe("down");
        expect(spawner.processes).toHaveLength(3);
        await expect(supervisor.chat(turn)).rejects.toBe(error);
    });

    it("counts restarts that fail to start against the budget too", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner, { maxRestarts: 3, startTimeoutMs: 10 });
        spawner.readyOnSpawn = false;
        const down = nextEvent(supervisor, "down");
        spawner.last.exit(null, "SIGKILL");
        const { error } = (await down) as { error: EngineUnavailableError };
        expect(error.message).toMatch(
            /^The engine did not come back after 3 restarts within 60 s; the last try said: The engine process did not become ready within 0.01 s/
        );
        expect(spawner.processes).toHaveLength(4);
        expect(spawner.processes.every((child) => child.exited)).toBe(true);
    });
});

describe("EngineSupervisor.dispose", () => {
    it("sends shutdown, waits for the exit, rejects calls after it, and is idempotent", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        await Promise.all([supervisor.dispose(), supervisor.dispose()]);
        expect(spawner.last.sent).toEqual([{ type: "shutdown" }]);
        expect(spawner.last.killSignals).toEqual([]);
        expect(spawner.last.exited).toBe(true);
        expect(supervisor.state).toBe("disposed");
        await expect(supervisor.chat(turn)).rejects.toMatchObject({ code: "engine_stopped" });
    });

    it("kills an engine that does not exit within the grace period; what ran ends with engine_stopped", async () => {
        const spawner = new FakeSpawner();
        spawner.exitOnShutdown = false;
        const supervisor = await start(spawner, { shutdownGraceMs: 20 });
        const running = supervisor.chat(turn).catch((error: unknown) => error);
        await Promise.resolve();
        await supervisor.dispose();
        expect(spawner.last.killSignals).toEqual(["SIGKILL"]);
        expect(await running).toMatchObject({ code: "engine_stopped" });
    });

    it("during a restart, stops the engine that is starting and fails the calls that waited", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        spawner.readyOnSpawn = false;
        spawner.last.exit(null, "SIGKILL");
        const waiting = supervisor.chat(turn).catch((error: unknown) => error);
        await new Promise((resolve) => setTimeout(resolve, 5));
        await supervisor.dispose();
        expect(await waiting).toMatchObject({ code: "engine_stopped" });
        expect(spawner.processes).toHaveLength(2);
        expect(spawner.last.killSignals).toEqual(["SIGKILL"]);
        expect(spawner.last.exited).toBe(true);
    });
});

describe("EngineSupervisor.switchModel", () => {
    const facts = (modelPath: string, name?: string): ModelFacts =>
        ({ path: modelPath, fileName: modelPath.split("/").at(-1)!, name }) as ModelFacts;
    const goodInspector = async (modelPath: string) => facts(modelPath, "Next Model");

    it("ends running turns with model_switched, starts an engine on the new file with the same config, and resolves with its info", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner, { inspectModel: goodInspector });
        const switched = new Promise((resolve) => supervisor.on("switched", resolve));
        const running = supervisor.chat(turn).catch((error: unknown) => error);
        await Promise.resolve();
        const info = await supervisor.switchModel("/models/next.gguf");
        const error = (await running) as ModelSwitchedError;
        expect(error).toBeInstanceOf(ModelSwitchedError);
        expect(error.code).toBe("model_switched");
        expect(error.message).toBe("The model was switched to Next Model while this turn ran; send the message again.");
        expect(spawner.processes[0]!.lastSent("shutdown")).toEqual({ type: "shutdown" });
        expect(spawner.modelPaths).toEqual(["/fake.gguf", "/models/next.gguf"]);
        expect(info.modelName).toBe("fake 1001");
        expect(supervisor.info.modelName).toBe("fake 1001");
        expect(supervisor.pid).toBe(1001);
        expect(supervisor.state).toBe("running");
        expect(await switched).toMatchObject({ pid: 1001, numEnded: 1 });
        expect(supervisor.numRestarts).toBe(0);
    });

    it("refuses a bad file before touching the running engine", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner, {
            inspectModel: async () => {
                throw new ModelNotGgufError('/x is not a GGUF file (it starts with "{\\n  "; a GGUF file starts with "GGUF").');
            }
        });
        const running = supervisor.chat(turn);
        await expect(supervisor.switchModel("/x")).rejects.toMatchObject({ code: "model_not_gguf" });
        expect(spawner.processes).toHaveLength(1);
        expect(spawner.last.sent.map((command) => command.type)).toEqual(["chat"]);
        const usage = { promptTokens: 1, cachedPromptTokens: 0, evaluatedPromptTokens: 1, completionTokens: 1 };
        spawner.last.emit({ type: "finished", requestId: "r1", text: "ok", finishReason: "stop", usage });
        await expect(running).resolves.toMatchObject({ text: "ok" });
        expect(supervisor.pid).toBe(1000);
    });

    it("calls made during the switch wait for the new engine", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner, { inspectModel: goodInspector });
        const switching = supervisor.switchModel("/models/next.gguf");
        await new Promise((resolve) => setTimeout(resolve, 0));
        const measuring = supervisor.call("measure", { workspace: "alice", messages: [], draft: "Hi" });
        await switching;
        await expect.poll(() => spawner.last.sent.map((command) => command.type)).toEqual(["call"]);
        const result = { workspace: "alice", draftTokens: 1, usedTokens: 0, limit: 256, remainingTokens: 255, fits: true };
        spawner.last.answer("measure", { result });
        await expect(measuring).resolves.toEqual(result);
        expect(spawner.processes[0]!.sent.map((command) => command.type)).toEqual(["shutdown"]);
    });

    it("starts the previous model again when the new one does not start, and rejects with why", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner, { inspectModel: goodInspector });
        spawner.readyOnSpawn = false;
        const switching = supervisor.switchModel("/models/broken.gguf").catch((error: unknown) => error);
        await expect.poll(() => spawner.processes.length).toBe(2);
        spawner.readyOnSpawn = true;
        spawner.last.emit({ type: "startFailed", error: { code: "model_load_failed", message: "llama.cpp could not load it." } });
        spawner.last.exit(1, null);
        const error = (await switching) as EngineStartError;
        expect(error).toBeInstanceOf(EngineStartError);
        expect(error.message).toBe("The engine could not start: llama.cpp could not load it.");
        expect(spawner.modelPaths).toEqual(["/fake.gguf", "/models/broken.gguf", "/fake.gguf"]);
        expect(supervisor.state).toBe("running");
        expect(supervisor.pid).toBe(1002);
    });
});
