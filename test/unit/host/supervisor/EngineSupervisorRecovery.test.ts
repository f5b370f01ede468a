// The supervisor after a crash, at dispose, and across a model switch.
import { afterEach, describe, expect, it } from "vitest";
import type { ModelFacts } from "../../../../contract/models.js";
import { EngineCrashedError, EngineStartError, type EngineUnavailableError } from "../../../../host/supervisor/engineHostErrors.js";
import { ModelNotGgufError, ModelSwitchedError } from "../../../../host/models/modelErrors.js";
import { FakeSpawner, disposeSupervisors, info, nextEvent, start, turn } from "./supervisorFakes.js";

afterEach(disposeSupervisors);

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
