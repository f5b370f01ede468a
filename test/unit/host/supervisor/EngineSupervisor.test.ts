import { afterEach, describe, expect, it } from "vitest";
import { EngineRequestError, EngineStartError } from "../../../../host/supervisor/engineHostErrors.js";
import { TurnEventLog } from "../../../support/TurnEventLog.js";
import { FakeSpawner, disposeSupervisors, start, turn } from "./supervisorFakes.js";

afterEach(disposeSupervisors);

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
    it("streams queued, started and text, each as the engine sent it, then resolves with the result", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const seen = new TurnEventLog();
        const result = supervisor.chat(turn, seen.listener());
        await Promise.resolve();
        expect(spawner.last.lastSent("chat").request.requestId).toBe("r1");
        const child = spawner.last;
        const hel = { type: "text", requestId: "r1", text: "Hel" } as const;
        child.emit({ type: "queued", requestId: "r1", position: 2 });
        child.emit({ type: "started", requestId: "r1" });
        child.emit(hel);
        child.emit({ type: "text", requestId: "other", text: "not mine" });
        child.emit({ type: "text", requestId: "r1", text: "lo" });
        const usage = { promptTokens: 5, cachedPromptTokens: 0, evaluatedPromptTokens: 5, completionTokens: 2 };
        child.emit({ type: "finished", requestId: "r1", text: "Hello", finishReason: "length", usage });
        await expect(result).resolves.toEqual({ text: "Hello", finishReason: "length", usage });
        expect(seen.lines).toEqual(["queued 2", "started", "text Hel", "text lo"]);
        expect(seen.requestIds).toEqual(["r1"]);
        // handed on as it came: the host converts nothing
        expect(seen.events[2]).toBe(hel);
    });

    it("routes a batch's events in their order as if each came alone, and ignores a batch nested in one", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const seen = new TurnEventLog();
        const result = supervisor.chat(turn, seen.listener());
        await Promise.resolve();
        const usage = { promptTokens: 5, cachedPromptTokens: 0, evaluatedPromptTokens: 5, completionTokens: 2 };
        spawner.last.emit({
            type: "batch",
            events: [
                { type: "started", requestId: "r1" },
                { type: "text", requestId: "r1", text: "Hel" },
                { type: "batch", events: [{ type: "text", requestId: "r1", text: "nested" }] },
                { type: "text", requestId: "other", text: "not mine" }
            ]
        });
        spawner.last.emit({
            type: "batch",
            events: [
                { type: "text", requestId: "r1", text: "lo" },
                { type: "finished", requestId: "r1", text: "Hello", finishReason: "stop", usage }
            ]
        });
        await expect(result).resolves.toEqual({ text: "Hello", finishReason: "stop", usage });
        expect(seen.lines).toEqual(["started", "text Hel", "text lo"]);
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
        const result = supervisor.chat(turn, undefined, controller.signal);
        await Promise.resolve();
        controller.abort();
        expect(spawner.last.lastSent("cancel")).toEqual({ type: "cancel", requestId: "r1" });
        spawner.last.emit({
            type: "failed",
            requestId: "r1",
            error: { code: "request_cancelled", message: "The request was cancelled during decode." }
        });
        await expect(result).rejects.toMatchObject({ code: "request_cancelled" });
        await expect(supervisor.chat({ ...turn, requestId: "r2" }, undefined, AbortSignal.abort())).rejects.toMatchObject({
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
