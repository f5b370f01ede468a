import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TurnResult } from "../../../engine/service/EngineService.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { EngineStartError } from "../../../host/supervisor/engineHostErrors.js";
import { EngineSupervisor } from "../../../host/supervisor/EngineSupervisor.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import {
    Conversation,
    RecordingSpawner,
    expectNoEngineLeft,
    isProcessAlive,
    stateDirectoriesOf,
    tinyProcessConfig,
    waitUntil,
    type ChatEngine
} from "./supervisorFixtures.js";

const WORKSPACES = ["alice", "bob"] as const;
const NUM_TURNS = 3;

function userText(workspace: string, turn: number): string {
    return `${workspace} asks question ${turn}: which pages hold token ${turn * 11}?`;
}

/** Both workspaces, turn by turn, their turns sent at once: the same schedule in process and across it. */
async function converse(
    engine: ChatEngine
): Promise<{ results: Map<string, TurnResult[]>; streamed: Map<string, string[]>; conversations: Conversation[] }> {
    const conversations = WORKSPACES.map((workspace) => new Conversation(workspace));
    const results = new Map<string, TurnResult[]>(WORKSPACES.map((workspace) => [workspace, []]));
    const streamed = new Map<string, string[]>(WORKSPACES.map((workspace) => [workspace, []]));
    for (let turn = 0; turn < NUM_TURNS; turn++) {
        await Promise.all(
            conversations.map(async (conversation) => {
                let text = "";
                const result = await conversation.turn(engine, userText(conversation.workspace, turn), {
                    listener: (event) => {
                        if (event.type === "text") {
                            text += event.text;
                        }
                    }
                });
                results.get(conversation.workspace)!.push(result);
                streamed.get(conversation.workspace)!.push(text);
            })
        );
    }
    return { results, streamed, conversations };
}

describe("the engine in its own process, behind the supervisor", () => {
    let inProcess: Awaited<ReturnType<typeof converse>>;
    let inProcessMeasure: unknown;

    beforeAll(async () => {
        const runtime = await LlamaRuntime.start({ gpu: false });
        try {
            const service = await EngineService.start(tinyProcessConfig, { runtime });
            try {
                inProcess = await converse(service);
                inProcessMeasure = await service.measure("alice", inProcess.conversations[0]!.messages, "One more question?");
            } finally {
                await service.dispose();
            }
        } finally {
            await runtime.dispose();
        }
    });

    let supervisor: EngineSupervisor | undefined;
    const spawner = new RecordingSpawner();
    afterAll(async () => {
        await supervisor?.dispose();
    });

    it("answers two workspaces, greedy, exactly as the in-process EngineService does", async () => {
        supervisor = await EngineSupervisor.start(tinyProcessConfig, { spawner });
        const pid = supervisor.pid!;
        expect(pid).not.toBe(process.pid);
        expect(isProcessAlive(pid)).toBe(true);
        expect(supervisor.info.modelName).toBe("Kvault synthetic tiny");
        expect(supervisor.info.window.limit).toBe(256);

        const across = await converse(supervisor);
        for (const workspace of WORKSPACES) {
            const expected = inProcess.results.get(workspace)!;
            const actual = across.results.get(workspace)!;
            expect(
                actual.map((result) => result.text),
                workspace
            ).toEqual(expected.map((result) => result.text));
            expect(actual.map((result) => result.finishReason)).toEqual(expected.map((result) => result.finishReason));
            expect(actual.map((result) => [result.usage.promptTokens, result.usage.completionTokens])).toEqual(
                expected.map((result) => [result.usage.promptTokens, result.usage.completionTokens])
            );
            // What streamed as token events is the answer, chunk by chunk, across the process boundary too.
            expect(across.streamed.get(workspace)).toEqual(actual.map((result) => result.text));
            expect(actual.every((result) => result.text.length > 0 && result.usage.completionTokens === 6)).toBe(true);
            // The engine process keeps each workspace's KV between turns: later turns reuse it.
            expect(actual.slice(1).every((result) => result.usage.cachedPromptTokens > 0)).toBe(true);
        }
        expect(across.results.get("alice")!.map((result) => result.text)).not.toEqual(
            across.results.get("bob")!.map((result) => result.text)
        );

        expect(
            await supervisor.call("measure", {
                workspace: "alice",
                messages: across.conversations[0]!.messages,
                draft: "One more question?"
            })
        ).toEqual(inProcessMeasure);
        const snapshot = await supervisor.call("snapshot", {});
        expect(snapshot.workspaces.map((usage) => usage.workspace).sort()).toEqual(["alice", "bob"]);
        expect(snapshot.counters.requests.finished).toBe(WORKSPACES.length * NUM_TURNS);

        await supervisor.call("forgetWorkspace", { workspace: "alice" });
        expect((await supervisor.call("snapshot", {})).workspaces.map((usage) => usage.workspace)).toEqual(["bob"]);
        expect(supervisor.pid).toBe(pid);
        expect(supervisor.numRestarts).toBe(0);

        await supervisor.dispose();
        await supervisor.dispose();
        expect(supervisor.state).toBe("disposed");
        expectNoEngineLeft(spawner.pids);
        expect(spawner.pids).toEqual([pid]);
    });

    it("shuts down mid-turn: the turn ends with engine_stopped, and the engine exits on its own, in time", async () => {
        const stopping = new RecordingSpawner();
        const log: string[] = [];
        const engine = await EngineSupervisor.start(tinyProcessConfig, { spawner: stopping, log: (line) => log.push(line) });
        let disposed: Promise<void> | undefined;
        const turn = engine
            .chat(new Conversation("carol").request("Go on.", { temperature: 0, maxTokens: 150 }), (event) => {
                if (event.type === "text") {
                    disposed ??= engine.dispose();
                }
            })
            .catch((error: unknown) => error);
        const error = (await turn) as { code: string; message: string };
        expect(error).toMatchObject({
            code: "engine_stopped",
            message:
                "The engine shut down while this turn ran; nothing more will be generated. Send it again once the engine has restarted."
        });
        await disposed;
        expect(log.filter((line) => /killing it/.test(line))).toEqual([]);
        await expect(engine.call("snapshot", {})).rejects.toMatchObject({ code: "engine_stopped" });
        expectNoEngineLeft(stopping.pids);
    });

    it("refuses to start on a configuration the engine refuses, with its reason, and leaves no process", async () => {
        const refusing = new RecordingSpawner({ quiet: true });
        const error = (await EngineSupervisor.start({ ...tinyProcessConfig, pageTokens: 0 }, { spawner: refusing }).catch(
            (caught: unknown) => caught
        )) as EngineStartError;
        expect(error).toBeInstanceOf(EngineStartError);
        expect(error.message).toBe("The engine could not start: pageTokens is 0; it must be a whole number of at least 1.");
        expect(error.reason).toEqual({
            code: "invalid_engine_config",
            message: "pageTokens is 0; it must be a whole number of at least 1."
        });
        expect(refusing.stderr).toContain(`[kvault engine ${refusing.pids[0]}] could not start: pageTokens is 0`);
        expectNoEngineLeft(refusing.pids);
    });

    it("refuses to start on a missing model file, saying what to check", async () => {
        const refusing = new RecordingSpawner({ quiet: true });
        const error = (await EngineSupervisor.start(
            { ...tinyProcessConfig, modelPath: "/nonexistent/kvault-missing.gguf" },
            { spawner: refusing }
        ).catch((caught: unknown) => caught)) as EngineStartError;
        expect(error).toBeInstanceOf(EngineStartError);
        expect(error.reason?.code).toBe("engine_start_failed");
        expect(error.message).toMatch(
            /^The engine could not start: Loading the model failed \(.*kvault-missing\.gguf.*\)\. Check that the file exists/
        );
        expectNoEngineLeft(refusing.pids);
    });

    it("exits by itself when its host dies (SIGKILL): no orphan engine, no state directory left", async () => {
        // A host in its own process, so that it can be killed outright: it starts the engine and prints the engine's pid.
        const supervisorUrl = pathToFileURL(new URL("../../../host/supervisor/EngineSupervisor.ts", import.meta.url).pathname).href;
        const script = `import(${JSON.stringify(supervisorUrl)}).then(async ({ EngineSupervisor }) => {
            const supervisor = await EngineSupervisor.start(${JSON.stringify(tinyProcessConfig)});
            process.stdout.write("ENGINE_PID " + supervisor.pid + "\\n");
        });`;
        const host = spawn(process.execPath, ["--import", "tsx", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
        let engineId: number | undefined;
        try {
            let stdout = "";
            host.stdout.setEncoding("utf8");
            host.stdout.on("data", (chunk: string) => {
                stdout += chunk;
            });
            await waitUntil(() => /ENGINE_PID (\d+)/.test(stdout) || host.exitCode !== null, 60_000, "the host to start its engine");
            engineId = Number(/ENGINE_PID (\d+)/.exec(stdout)?.[1]);
            expect(Number.isSafeInteger(engineId)).toBe(true);
            expect(isProcessAlive(engineId)).toBe(true);
            expect(stateDirectoriesOf(engineId)).toHaveLength(1);
        } finally {
            host.kill("SIGKILL");
        }
        const pid = engineId;
        await waitUntil(() => !isProcessAlive(pid), 15_000, `engine process ${pid} to exit after its host died`);
        expectNoEngineLeft([pid]);
    });
});
