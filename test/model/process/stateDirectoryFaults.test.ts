import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { EngineStartError } from "../../../host/supervisor/engineHostErrors.js";
import { EngineSupervisor } from "../../../host/supervisor/EngineSupervisor.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { PrivateStateDirectory } from "../../../engine/runtime/PrivateStateDirectory.js";
import { alice, bob, expectEngineClean, promptOf, startTinyEngine } from "../../support/engineFixtures.js";
import { Conversation, RecordingSpawner, expectNoEngineLeft, tinyProcessConfig } from "./supervisorFixtures.js";
import {
    engineDirectoriesIn,
    fillFileSystem,
    freeBytesOf,
    makeStateRoot,
    mountSmallFileSystem,
    type SmallFileSystem
} from "./stateRoots.js";

// The engine writes each handoff's KV state into its private state directory for an instant
// (llama.cpp writes the export, the engine the import). These tests break that directory for
// real, in ways that stop root as well as anyone: a small tmpfs that fills up (ENOSPC), the same
// remounted read-only (EROFS), the directory replaced by a file or its root under one (ENOTDIR).

const FIRST = "A page?";
/** About 150 tokens of the tiny model: a state of about 90 KB, which 32 KiB cannot hold. */
const LONG =
    "Tell me where my context lives: which pages hold it, who else can read them, and what happens to them when this turn ends and the next one starts.";
const NEXT = "And now?";
const SMALL_FS_BYTES = 1024 * 1024;
const LEFT_FREE = 32 * 1024;

const smallFileSystem = mountSmallFileSystem(SMALL_FS_BYTES);
const noMount = "unavailable" in smallFileSystem ? smallFileSystem.unavailable : undefined;
/** The small tmpfs; a test that needs one fails (never skips) where mounting is refused: CI runs as root. */
function mounted(): SmallFileSystem {
    if (noMount !== undefined) {
        throw new Error(`This test needs a 1 MiB tmpfs of its own, and ${noMount}. Run the model tests as root (CI does).`);
    }
    return smallFileSystem as SmallFileSystem;
}

/**
 * The turn fails with `code` and a message matching `message`; nothing streamed; the same engine
 * process runs on, with every page free, no lease, no state file left, and its audit clean.
 */
async function expectFailedCleanly(
    supervisor: EngineSupervisor,
    conversation: Conversation,
    text: string,
    code: string,
    message: RegExp
): Promise<Error> {
    const pid = supervisor.pid;
    const before = await supervisor.call("snapshot", {});
    let streamed = "";
    const error = await conversation
        .turn(supervisor, text, {
            listener: (event) => {
                if (event.type === "text") {
                    streamed += event.text;
                }
            }
        })
        .then(
            () => {
                throw new Error(`The turn of ${conversation.workspace} was served although its state could not be written.`);
            },
            (caught: unknown) => caught as Error
        );
    expect(error).toMatchObject({ code, message: expect.stringMatching(message) });
    expect(streamed).toBe("");
    expect(supervisor.pid).toBe(pid); // no crash, no restart: the engine itself is healthy
    expect(supervisor.state).toBe("running");
    const after = await supervisor.call("snapshot", {});
    expect(after.counters.requests.failed).toBe(before.counters.requests.failed + 1);
    expect(after.pageMap.numPagesByState.free).toBe(after.pageMap.numPages); // the request's pages were released (and scrubbed)
    expect(after.pageMap.numActiveLeases).toBe(0);
    expect(after.workspaces.find((workspace) => workspace.workspace === conversation.workspace)?.heldTokens ?? 0).toBe(0);
    expect((await supervisor.call("audit", {})).ok).toBe(true);
    return error;
}

/** How every test here ends: the workspaces forgotten, no page, lease or state file left; then no process and no directory. */
async function expectEngineCleanThenGone(
    supervisor: EngineSupervisor,
    spawner: RecordingSpawner,
    root: string,
    workspaces: readonly string[]
): Promise<void> {
    for (const workspace of workspaces) {
        await supervisor.call("forgetWorkspace", { workspace: workspace });
    }
    const snapshot = await supervisor.call("snapshot", {});
    expect(snapshot.workspaces).toEqual([]);
    expect(snapshot.pageMap.numPagesByState.free).toBe(snapshot.pageMap.numPages);
    expect(snapshot.pageMap.numActiveLeases).toBe(0);
    expect(snapshot.roles.every((role) => role.numBusySequences === 0)).toBe(true);
    expect((await supervisor.call("audit", {})).ok).toBe(true);
    const [directory] = engineDirectoriesIn(root, supervisor.pid);
    expect(fs.readdirSync(directory!)).toEqual([]);
    await supervisor.dispose();
    expectNoEngineLeft(spawner.pids);
    expect(engineDirectoriesIn(root)).toEqual([]);
}

// The private state directory is the file path's: these engines move states through it
// (stateExchange "file") whatever the binary; a local build's go through memory and write no file.
describe("the state directory unwritable or full: a typed error with the numbers, the request's pages released, the engine healthy once the condition clears", () => {
    let supervisor: EngineSupervisor | undefined;
    const roots: string[] = [];
    afterEach(async () => {
        await supervisor?.dispose();
        supervisor = undefined;
    });
    afterAll(() => {
        if (noMount === undefined) {
            mounted().dispose();
        }
        for (const root of roots) {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it("the directory replaced by a file mid-run (ENOTDIR, which stops root too): state_directory_unwritable, naming it; served again once it is back", async () => {
        const root = makeStateRoot("state-replaced");
        roots.push(root);
        const spawner = new RecordingSpawner({ quiet: true });
        supervisor = await EngineSupervisor.start({ ...tinyProcessConfig, stateRoot: root, stateExchange: "file" }, { spawner });
        const [alice, bob] = [new Conversation("alice"), new Conversation("bob")];
        await alice.turn(supervisor, FIRST);
        const [directory] = engineDirectoriesIn(root, supervisor.pid);

        fs.rmSync(directory!, { recursive: true });
        fs.writeFileSync(directory!, "not a directory");
        const error = await expectFailedCleanly(
            supervisor,
            bob,
            LONG,
            "state_directory_unwritable",
            /^This request's KV state \([\d,]+ bytes\) could not be written to the private state directory .+: something that is not a directory has taken its place\. Nothing was generated and its pages were released\. Make the directory writable again \(or restart the engine, which makes a new one\), then send the message again\.$/
        );
        expect(error.message).toContain(directory!);
        // llama.cpp wrote the real reason to stderr; the engine's error says it in words.
        expect(spawner.stderr).toContain("Not a directory");

        fs.rmSync(directory!);
        fs.mkdirSync(directory!, { mode: 0o700 });
        expect((await bob.turn(supervisor, LONG)).usage.completionTokens).toBeGreaterThan(0);
        expect((await alice.turn(supervisor, NEXT)).usage.cachedPromptTokens).toBeGreaterThan(0); // alice's KV was never touched
        await expectEngineCleanThenGone(supervisor, spawner, root, ["alice", "bob"]);
    });

    it("a root the directory cannot be made in (under a regular file: ENOTDIR): the engine refuses to start, saying which root and what to do", async () => {
        const root = makeStateRoot("state-under-file");
        roots.push(root);
        fs.writeFileSync(path.join(root, "file"), "");
        const unmakeable = path.join(root, "file", "states");
        const spawner = new RecordingSpawner({ quiet: true });
        const error = (await EngineSupervisor.start(
            { ...tinyProcessConfig, stateRoot: unmakeable, stateExchange: "file" },
            { spawner }
        ).catch((caught: unknown) => caught)) as EngineStartError;
        expect(error).toBeInstanceOf(EngineStartError);
        expect(error.reason).toEqual({
            code: "state_directory_unwritable",
            message:
                `Kvault cannot write KV state files in ${unmakeable}: ENOTDIR: not a directory. The engine keeps a sequence's KV there for an instant during every handoff, ` +
                `so it cannot start. Make ${unmakeable} a writable directory (or point the engine's stateRoot at one), then start it again.`
        });
        expectNoEngineLeft(spawner.pids);
    });

    it("the file system full mid-run (a 1 MiB tmpfs, 32 KiB left): state_directory_full before anything is written, with the bytes needed and free", async () => {
        const fileSystem = mounted();
        const spawner = new RecordingSpawner({ quiet: true });
        supervisor = await EngineSupervisor.start({ ...tinyProcessConfig, stateRoot: fileSystem.path, stateExchange: "file" }, { spawner });
        const [alice, bob] = [new Conversation("alice"), new Conversation("bob")];
        await alice.turn(supervisor, FIRST);
        const [directory] = engineDirectoriesIn(fileSystem.path, supervisor.pid);

        const removeFiller = fillFileSystem(fileSystem.path, LEFT_FREE);
        expect(freeBytesOf(fileSystem.path)).toBe(LEFT_FREE);
        const error = await expectFailedCleanly(
            supervisor,
            bob,
            LONG,
            "state_directory_full",
            /^The file system of the KV state directory .+ is full: this request's KV state needs [\d,]+ bytes and 32,768 bytes are free\. Nothing was generated and its pages were released\. Free space there, then send the message again\.$/
        );
        expect(error.message).toContain(directory!);
        const needed = Number(/needs ([\d,]+) bytes/.exec(error.message)![1]!.replaceAll(",", ""));
        expect(needed).toBeGreaterThan(LEFT_FREE);
        expect(needed % 4096).toBe(0); // whole blocks, as the file system counts them
        expect(spawner.stderr).not.toContain("error saving sequence state file"); // refused before llama.cpp wrote a byte

        removeFiller();
        expect((await bob.turn(supervisor, LONG)).usage.completionTokens).toBeGreaterThan(0);
        expect((await alice.turn(supervisor, NEXT)).usage.cachedPromptTokens).toBeGreaterThan(0);
        await expectEngineCleanThenGone(supervisor, spawner, fileSystem.path, ["alice", "bob"]);
    });

    it("the file system full at start (0 bytes free): llama.cpp's write of the probe fails, and the engine says why", async () => {
        const fileSystem = mounted();
        const removeFiller = fillFileSystem(fileSystem.path, 0);
        try {
            const spawner = new RecordingSpawner({ quiet: true });
            const error = (await EngineSupervisor.start(
                { ...tinyProcessConfig, stateRoot: fileSystem.path, stateExchange: "file" },
                { spawner }
            ).catch((caught: unknown) => caught)) as EngineStartError;
            expect(error).toBeInstanceOf(EngineStartError);
            expect(error.reason?.code).toBe("state_directory_full");
            // The probe's state (several tokens) outgrows llama.cpp's stdio buffer, so its own write fails
            // and reports no size; the engine finds the file system full by looking at it.
            expect(error.reason?.message).toMatch(
                /^The file system of the KV state directory .+kvault-state-\d+-[0-9a-f]+ is full: 0 bytes are free\. The engine could not start\. Free space there, then start the engine again\.$/
            );
            expectNoEngineLeft(spawner.pids);
            expect(engineDirectoriesIn(fileSystem.path)).toEqual([]); // the failed start removed its directory
        } finally {
            removeFiller();
        }
        const spawner = new RecordingSpawner({ quiet: true });
        supervisor = await EngineSupervisor.start({ ...tinyProcessConfig, stateRoot: fileSystem.path, stateExchange: "file" }, { spawner }); // the condition cleared: it starts
        expect((await new Conversation("alice").turn(supervisor, FIRST)).usage.completionTokens).toBeGreaterThan(0);
        await expectEngineCleanThenGone(supervisor, spawner, fileSystem.path, ["alice"]);
    });

    it("a state write that meets ENOSPC for real (the room taken after the pre-check): state_directory_full, and no short file left", () => {
        const fileSystem = mounted();
        const directory = PrivateStateDirectory.create(fileSystem.path);
        const removeFiller = fillFileSystem(fileSystem.path, 8 * 1024);
        try {
            const filePath = directory.nextFilePath("req-1");
            expect(() => directory.writeExclusive(filePath, Buffer.alloc(64 * 1024, 1))).toThrow(
                expect.objectContaining({
                    // Free as it is once the short file is removed: what the user has to work with.
                    code: "state_directory_full",
                    numBytesNeeded: 64 * 1024,
                    numBytesFree: 8 * 1024,
                    message:
                        `The file system of the KV state directory ${directory.path} is full: this request's KV state needs 65,536 bytes and 8,192 bytes are free. ` +
                        "Nothing was generated and its pages were released. Free space there, then send the message again."
                })
            );
            expect(directory.listFiles()).toEqual([]);
        } finally {
            removeFiller();
            directory.dispose();
        }
    });

    it("a swap-out whose state does not fit: the turn that needed the sequence fails; the workspace being swapped keeps its KV and its sequence", async () => {
        const fileSystem = mounted();
        const runtime = await LlamaRuntime.start({ gpu: false });
        const engine = await startTinyEngine(runtime, { numDecodeSequences: 1, stateRoot: fileSystem.path, stateExchange: "file" });
        try {
            const alicePrompt = promptOf(engine, 100, "Alice's ledger. ");
            await engine.generate({ workspace: alice, promptTokens: alicePrompt, maxTokens: 2 });
            const removeFiller = fillFileSystem(fileSystem.path, 16 * 1024);
            try {
                // Bob needs alice's sequence: her KV (about 53 KB of state) must go to pages first, through the full directory.
                await expect(
                    engine.generate({ workspace: bob, promptTokens: promptOf(engine, 20, "Bob asks. "), maxTokens: 2 })
                ).rejects.toMatchObject({ code: "state_directory_full", numBytesFree: 16 * 1024 });
            } finally {
                removeFiller();
            }
            const aliceNow = engine.workspaces().find((session) => session.id === alice);
            expect(aliceNow?.residency.kind).toBe("resident");
            expect(aliceNow?.heldTokens.length).toBeGreaterThanOrEqual(100);
            expect(engine.pool.numFreePages).toBe(engine.config.numPages);
            // Room again: bob is served (alice swapped out, now for real), and alice comes back from her pages without recompute.
            expect(
                (await engine.generate({ workspace: bob, promptTokens: promptOf(engine, 20, "Bob asks. "), maxTokens: 2 })).tokens
            ).toHaveLength(2);
            const again = await engine.generate({ workspace: alice, promptTokens: [...alicePrompt, 7], maxTokens: 2 });
            expect(again.numReusedTokens).toBeGreaterThanOrEqual(100);
            await expectEngineClean(engine);
        } finally {
            await engine.dispose();
            await runtime.dispose();
        }
    });

    it("the file system remounted read-only mid-run (EROFS, which stops root too): state_directory_unwritable; served again once writable", async () => {
        const fileSystem = mounted();
        const spawner = new RecordingSpawner({ quiet: true });
        supervisor = await EngineSupervisor.start({ ...tinyProcessConfig, stateRoot: fileSystem.path, stateExchange: "file" }, { spawner });
        const [alice, bob] = [new Conversation("alice"), new Conversation("bob")];
        await alice.turn(supervisor, FIRST);

        fileSystem.setReadOnly(true);
        try {
            await expectFailedCleanly(
                supervisor,
                bob,
                LONG,
                "state_directory_unwritable",
                /^This request's KV state \([\d,]+ bytes\) could not be written to the private state directory .+kvault-state-\d+-[0-9a-f]+: EROFS: read-only file system\. Nothing was generated/
            );
        } finally {
            fileSystem.setReadOnly(false);
        }
        expect((await bob.turn(supervisor, LONG)).usage.completionTokens).toBeGreaterThan(0);
        await expectEngineCleanThenGone(supervisor, spawner, fileSystem.path, ["alice", "bob"]);
    });
});
