import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineCrashedError } from "../../../host/supervisor/engineHostErrors.js";
import { EngineSupervisor, type EngineSupervisorEvents } from "../../../host/supervisor/EngineSupervisor.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import {
    Conversation,
    GREEDY,
    RecordingSpawner,
    expectNoEngineLeft,
    isProcessAlive,
    stateDirectoriesOf,
    tinyProcessConfig
} from "./supervisorFixtures.js";

// Short: the tiny model's vocabulary spends about a token per character, and the window is 256.
const FIRST = "A page?";
const LONG = "Say more.";
const RETRY = "Shorter.";
/** At most this many tokens for the long turn; fewer when the window (256) has less room. */
const LONG_MAX_TOKENS = 200;

/**
 * The oracle, in process: each workspace's first answer, then the turn after the crash as an
 * engine that holds nothing of the workspace answers it: from the history's text alone (the
 * killed turn left no trace in it). Text, not the first answer's sampled tokens: the tiny model's
 * byte tokens do not survive detokenizing and tokenizing again.
 */
async function runInProcess(service: EngineService, workspaces: readonly string[]): Promise<Map<string, { first: string; retry: string }>> {
    const answers = new Map<string, { first: string; retry: string }>();
    for (const workspace of workspaces) {
        const conversation = new Conversation(workspace);
        const first = (await conversation.turn(service, FIRST)).text;
        await service.forgetWorkspace(workspace);
        answers.set(workspace, { first, retry: (await conversation.turn(service, RETRY)).text });
    }
    return answers;
}

describe("SIGKILL of the engine process mid-generation", () => {
    const workspaces = ["alice", "bob"] as const;
    let expected: Map<string, { first: string; retry: string }>;
    let supervisor: EngineSupervisor | undefined;
    const spawner = new RecordingSpawner();

    beforeAll(async () => {
        const runtime = await LlamaRuntime.start({ gpu: false });
        const service = await EngineService.start(tinyProcessConfig, { runtime });
        try {
            expected = await runInProcess(service, workspaces);
        } finally {
            await service.dispose();
            await runtime.dispose();
        }
    });
    afterAll(async () => {
        await supervisor?.dispose();
    });

    it("ends the turns in flight with engine_crashed, restarts the engine, and every workspace's next turn works from its history", async () => {
        supervisor = await EngineSupervisor.start(tinyProcessConfig, { spawner });
        const events: (["crashed", EngineSupervisorEvents["crashed"]] | ["restarted", EngineSupervisorEvents["restarted"]])[] = [];
        supervisor.on("crashed", (event) => events.push(["crashed", event]));
        supervisor.on("restarted", (event) => events.push(["restarted", event]));
        const conversations = workspaces.map((workspace) => new Conversation(workspace));
        for (const conversation of conversations) {
            expect((await conversation.turn(supervisor, FIRST)).text).toBe(expected.get(conversation.workspace)!.first);
        }
        const firstPid = supervisor.pid!;
        expect(stateDirectoriesOf(firstPid)).toHaveLength(1);

        // Both workspaces start a long generation; the engine process is killed on the first token.
        const turns = await Promise.all(
            conversations.map(async (conversation) => {
                const measured = await supervisor!.call("measure", {
                    workspace: conversation.workspace,
                    messages: conversation.messages,
                    draft: LONG
                });
                const maxTokens = Math.min(LONG_MAX_TOKENS, measured.remainingTokens - 16);
                expect(maxTokens).toBeGreaterThanOrEqual(150); // seconds of generation on a CPU: the kill lands well before the end
                return conversation.request(LONG, { temperature: 0, maxTokens });
            })
        );
        let numTokenEvents = 0;
        const inFlight = turns.map((request, index) =>
            supervisor!
                .chat(request, (event) => {
                    if (event.type !== "text") {
                        return;
                    }
                    numTokenEvents++;
                    if (index === 0 && numTokenEvents === 1) {
                        process.kill(firstPid, "SIGKILL");
                    }
                })
                .then(
                    (result) => {
                        throw new Error(
                            `The turn of ${request.workspace} finished (${result.usage.completionTokens} tokens) although its engine was killed.`
                        );
                    },
                    (error: unknown) => error
                )
        );
        const errors = await Promise.all(inFlight);
        for (const error of errors) {
            expect(error).toBeInstanceOf(EngineCrashedError);
            expect((error as EngineCrashedError).code).toBe("engine_crashed");
            expect((error as EngineCrashedError).message).toBe(
                "The engine process stopped (SIGKILL) while this turn ran. It restarts by itself; send your message again — your chat history is kept."
            );
        }
        expect(events[0]).toEqual(["crashed", { pid: firstPid, exitCode: null, signal: "SIGKILL", numInterrupted: 2, willRestart: true }]);
        expect(isProcessAlive(firstPid)).toBe(false);

        // Sent while the engine restarts: the turns wait for the new process instead of failing.
        expect(supervisor.state).toBe("restarting");
        expect(supervisor.pid).toBeUndefined();
        const retries = await Promise.all(conversations.map((conversation) => conversation.turn(supervisor!, RETRY, { sampling: GREEDY })));

        const secondPid = supervisor.pid!;
        expect(secondPid).not.toBe(firstPid);
        expect(isProcessAlive(secondPid)).toBe(true);
        expect(events.map(([type]) => type)).toEqual(["crashed", "restarted"]);
        expect(events[1]).toEqual(["restarted", { pid: secondPid, info: supervisor.info, numRestarts: 1 }]);
        expect(supervisor.numRestarts).toBe(1);
        for (const [index, result] of retries.entries()) {
            const workspace = workspaces[index]!;
            expect(result.text, workspace).toBe(expected.get(workspace)!.retry);
            expect(result.usage.completionTokens).toBe(GREEDY.maxTokens);
            // The new engine held nothing: the workspace was rebuilt from the history the host sent.
            expect(result.usage.cachedPromptTokens).toBe(0);
            expect(result.usage.evaluatedPromptTokens).toBe(result.usage.promptTokens);
        }
        // The new engine swept the killed one's state directory when it started.
        expect(stateDirectoriesOf(firstPid)).toEqual([]);

        // And the turn after that reuses the rebuilt KV as before the crash.
        const [next] = await Promise.all([conversations[0]!.turn(supervisor, "One more?")]);
        expect(next!.usage.cachedPromptTokens).toBeGreaterThan(0);

        await supervisor.dispose();
        expect(spawner.pids).toEqual([firstPid, secondPid]);
        expectNoEngineLeft(spawner.pids);
    });
});
