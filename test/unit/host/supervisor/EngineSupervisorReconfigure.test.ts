// The supervisor restarting on the same model with other settings (the settings screen's applyEngineSettings).
import { afterEach, describe, expect, it } from "vitest";
import { EngineStartError } from "../../../../host/supervisor/engineHostErrors.js";
import { EngineSettingsChangedError } from "../../../../host/settings/settingsErrors.js";
import { FakeSpawner, disposeSupervisors, start, turn } from "./supervisorFakes.js";

afterEach(disposeSupervisors);

const restart = {
    reason: "The engine restarts with new settings (contextSize 512 → 1024).",
    endWith: (what: "turn" | "call") => new EngineSettingsChangedError(what, "contextSize 512 → 1024")
};

describe("EngineSupervisor.reconfigure", () => {
    it("counts the turns it ended, not the host's own calls in flight (the memory record's poll)", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const switched = new Promise((resolve) => supervisor.on("switched", resolve));
        const poll = supervisor.call("memoryEvents", { afterSeq: 0 }).catch((error: unknown) => error);
        await Promise.resolve();
        await supervisor.reconfigure({ window: 1024, decodeContextSize: 1024 }, restart);
        expect(await poll).toBeInstanceOf(EngineSettingsChangedError);
        expect(await switched).toMatchObject({ pid: 1001, numEnded: 0, cause: "settings" });
    });

    it("ends running turns with engine_settings_changed and starts an engine on the same model with the new settings", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        const switched = new Promise((resolve) => supervisor.on("switched", resolve));
        const running = supervisor.chat(turn).catch((error: unknown) => error);
        await Promise.resolve();
        expect(supervisor.numTurns).toBe(1);
        const info = await supervisor.reconfigure({ window: 1024, decodeContextSize: 1024 }, restart);
        const error = (await running) as EngineSettingsChangedError;
        expect(error).toBeInstanceOf(EngineSettingsChangedError);
        expect(error.code).toBe("engine_settings_changed");
        expect(error.message).toBe(
            "The engine restarted with new settings (contextSize 512 → 1024) while this turn ran; send the message again."
        );
        // The same model (a change never swaps it), the new window.
        expect(spawner.modelPaths).toEqual(["/fake.gguf", "/fake.gguf"]);
        expect(spawner.configs[1]).toMatchObject({ window: 1024, decodeContextSize: 1024 });
        expect(info.modelName).toBe("fake 1001");
        expect(supervisor.state).toBe("running");
        expect(supervisor.numTurns).toBe(0);
        expect(await switched).toMatchObject({ pid: 1001, numEnded: 1, cause: "settings" });
    });

    it("starts the previous settings again when the new ones do not start, and rejects with why", async () => {
        const spawner = new FakeSpawner();
        const supervisor = await start(spawner);
        spawner.readyOnSpawn = false;
        const changing = supervisor.reconfigure({ numDecodeSequences: 64 }, restart).catch((error: unknown) => error);
        await expect.poll(() => spawner.processes.length).toBe(2);
        spawner.readyOnSpawn = true;
        spawner.last.emit({
            type: "startFailed",
            error: { code: "context_create_failed", message: "llama.cpp could not allocate the context." }
        });
        spawner.last.exit(1, null);
        const error = (await changing) as EngineStartError;
        expect(error).toBeInstanceOf(EngineStartError);
        expect(spawner.configs[1]).toMatchObject({ numDecodeSequences: 64 });
        expect(spawner.configs[2]).toEqual(spawner.configs[0]);
        expect(supervisor.state).toBe("running");
        expect(supervisor.pid).toBe(1002);
    });
});
