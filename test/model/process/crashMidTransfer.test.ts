import fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { EngineCrashedError } from "../../../host/supervisor/engineHostErrors.js";
import { EngineSupervisor, type EngineSupervisorEvents } from "../../../host/supervisor/EngineSupervisor.js";
import { Conversation, GREEDY, RecordingSpawner, expectNoEngineLeft, isProcessAlive, tinyProcessConfig } from "./supervisorFixtures.js";
import { engineDirectoriesIn, makeStateRoot } from "./stateRoots.js";

const FIRST = "A page?";
/** About 200 tokens of the tiny model: a fresh workspace's turn that prefill evaluates and hands to decode through pages. */
const LONG =
    "Here is a long message, long enough that prefill evaluates it and hands its KV to decode through pages: " +
    "where does my context live while it moves, and what is left of it if the engine dies on the way?";
const RETRY = "Shorter.";
/**
 * A transfer's state file: the engine names them after the request, whose id is the caller's
 * (supervisorFixtures' Conversation sends `carol-3`, so `carol-3-8.state`); a swap's is
 * `swap-<workspace>-N.state`, a probe's `kvault-state-…`.
 */
const TRANSFER_FILE = /^[a-z]+-\d+-\d+\.state$/;

/** Whether every thread of a process is stopped (SIGSTOP is delivered to each thread in its own time). */
function isStopped(pid: number): boolean {
    const tasks = fs.readdirSync(`/proc/${pid}/task`);
    return tasks.every((task) => {
        try {
            return /^\d+ \(.*\) [tT] /.test(fs.readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8"));
        } catch {
            return true; // a thread that ended
        }
    });
}

/** Freezes a process and returns once all its threads are stopped. */
function freeze(pid: number): void {
    process.kill(pid, "SIGSTOP");
    const deadline = performance.now() + 5_000;
    while (!isStopped(pid)) {
        if (performance.now() > deadline) {
            throw new Error(`engine process ${pid} did not stop within 5 s of SIGSTOP`);
        }
    }
}

// A transfer's first sign is in the engine's private state directory (a private state root, so the
// watch sees this engine's files alone): the state file llama.cpp creates when prefill's KV is
// exported for the handoff, then the one decode loads. On each, the engine is frozen (SIGSTOP, every
// thread) and its directory read: a transfer state file there means it is frozen mid-transfer, and
// it is killed (SIGKILL) where it stands. Otherwise (frozen between the two files) it goes on
// (SIGCONT) to the next. So the kill lands mid-transfer every time, not most times.

// The private state directory is the file path's: these engines move states through it
// (stateExchange "file") whatever the binary; a local build's go through memory and write no file.
describe("SIGKILL of the engine process mid-transfer", () => {
    const root = makeStateRoot("crash-transfer");
    const spawner = new RecordingSpawner({ quiet: true });
    let supervisor: EngineSupervisor | undefined;
    afterAll(async () => {
        await supervisor?.dispose();
        fs.rmSync(root, { recursive: true, force: true });
    });

    it("ends the turn with engine_crashed, restarts, sweeps the dead engine's state files, and every workspace's next turn works", async () => {
        supervisor = await EngineSupervisor.start({ ...tinyProcessConfig, stateRoot: root, stateExchange: "file" }, { spawner });
        const events: (keyof EngineSupervisorEvents)[] = [];
        supervisor.on("crashed", () => events.push("crashed"));
        supervisor.on("restarted", () => events.push("restarted"));
        const [alice, bob, carol] = ["alice", "bob", "carol"].map((workspace) => new Conversation(workspace)) as [
            Conversation,
            Conversation,
            Conversation
        ];
        await alice.turn(supervisor, FIRST);
        await bob.turn(supervisor, FIRST);
        const firstPid = supervisor.pid!;
        const [directory] = engineDirectoriesIn(root, firstPid);
        expect(fs.readdirSync(directory!)).toEqual([]); // between transfers, nothing is on disk

        let frozenWith: string[] | undefined;
        let leftAtDeath: string[] | undefined;
        supervisor.on("crashed", () => {
            leftAtDeath = fs.readdirSync(directory!);
        }); // the process is gone; its directory is as the kill left it
        const watcher = fs.watch(directory!, (_event, name) => {
            if (frozenWith !== undefined || name === null || !TRANSFER_FILE.test(name)) {
                return;
            }
            freeze(firstPid);
            const inTransfer = fs.readdirSync(directory!).filter((file) => TRANSFER_FILE.test(file));
            if (inTransfer.length > 0) {
                frozenWith = inTransfer;
                process.kill(firstPid, "SIGKILL");
            } else {
                process.kill(firstPid, "SIGCONT");
            }
        });
        let streamed = "";
        const error = await carol
            .turn(supervisor, LONG, {
                sampling: { temperature: 0, maxTokens: 8 },
                listener: (event) => {
                    if (event.type === "text") {
                        streamed += event.text;
                    }
                }
            })
            .then(
                (result) => {
                    throw new Error(`carol's turn finished (${result.usage.completionTokens} tokens) although its engine was killed.`);
                },
                (caught: unknown) => caught
            );
        watcher.close();

        expect(frozenWith, "the engine was never frozen with a transfer's state file in its directory").toHaveLength(1);
        expect(error).toBeInstanceOf(EngineCrashedError);
        expect(error).toMatchObject({
            code: "engine_crashed",
            message:
                "The engine process stopped (SIGKILL) while this turn ran. It restarts by itself; send your message again — your chat history is kept."
        });
        expect(streamed).toBe(""); // killed before decode: not a token went out
        expect(isProcessAlive(firstPid)).toBe(false);
        // Died mid-transfer: the transfer's state file (KV bytes) it was frozen with is left in its private directory.
        expect(leftAtDeath).toEqual(frozenWith);

        // Every workspace's next turn works on the new engine, rebuilt from the history the host sends.
        const results = await Promise.all([alice, bob].map((conversation) => conversation.turn(supervisor!, RETRY, { sampling: GREEDY })));
        const retried = await carol.turn(supervisor, LONG, { sampling: { temperature: 0, maxTokens: 8 } });
        for (const result of [...results, retried]) {
            expect(result.usage.completionTokens).toBeGreaterThan(0);
            expect(result.usage.cachedPromptTokens).toBe(0); // the new engine held nothing
        }
        const secondPid = supervisor.pid!;
        expect(secondPid).not.toBe(firstPid);
        expect(events).toEqual(["crashed", "restarted"]);
        // The new engine swept the dead one's directory, state file and all, when it started.
        expect(fs.existsSync(directory!)).toBe(false);
        expect(engineDirectoriesIn(root)).toEqual(engineDirectoriesIn(root, secondPid));

        // Nothing leaked in the new engine: once the workspaces are forgotten, every page is free, no lease, no file.
        for (const workspace of ["alice", "bob", "carol"]) {
            await supervisor.call("forgetWorkspace", { workspace: workspace });
        }
        const snapshot = await supervisor.call("snapshot", {});
        expect(snapshot.workspaces).toEqual([]);
        expect(snapshot.pageMap.numPagesByState.free).toBe(snapshot.pageMap.numPages);
        expect(snapshot.pageMap.numActiveLeases).toBe(0);
        expect((await supervisor.call("audit", {})).ok).toBe(true);
        expect(fs.readdirSync(engineDirectoriesIn(root, secondPid)[0]!)).toEqual([]);
        await supervisor.dispose();
        expect(spawner.pids).toEqual([firstPid, secondPid]);
        expectNoEngineLeft(spawner.pids);
        expect(engineDirectoriesIn(root)).toEqual([]);
    });
});
