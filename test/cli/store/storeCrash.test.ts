import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storePaths } from "../../../host/store/storePaths.js";
import { WorkspaceStore } from "../../../host/store/WorkspaceStore.js";
import { repositoryRoot } from "../../support/generatedModels.js";
import { crashMessage, crashMeta, crashWorkspace, isBigMessage } from "./crashMessages.js";

// Kill -9 a process that is saving, at a moment chosen at random around the start of a save,
// then open the store as the next start would. The kill can land before the write, inside it
// (a big line cut short), or after it (during the fsync, unacknowledged): each outcome has its
// rule below. Kill moments come from a seeded generator: a failure names its seed.
const NUM_ROUNDS = 10;
/** How long after a save starts it is killed, at most (ms): a big line's write and fsync take about this long. */
const MAX_KILL_DELAY_MS = 40;
const seed = Number(process.env.KVAULT_CRASH_SEED ?? Date.now() % 1_000_000);

/** mulberry32: small, seeded, good enough to spread kill times. */
function random(state: number): () => number {
    return () => {
        state = (state + 0x6d2b79f5) | 0;
        let t = Math.imul(state ^ (state >>> 15), 1 | state);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
}

/**
 * Runs the child from `first`, kills it (SIGKILL) `delayMs` after it starts save `target`
 * (> first, so at least one save was acknowledged), and returns the acks it printed: each one a
 * save that had resolved, so must survive.
 */
async function saveUntilKilled(
    mode: "journal" | "metadata",
    dataDir: string,
    first: number,
    target: number,
    delayMs: number
): Promise<number[]> {
    const child = spawn(process.execPath, ["--import", "tsx", "test/cli/store/storeCrashChild.ts", mode, dataDir, String(first)], {
        cwd: repositoryRoot,
        stdio: ["ignore", "pipe", "pipe"]
    });
    let stdout = "";
    let stderr = "";
    const acks: number[] = [];
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once("exit", (code, signal) => resolve(signal ?? code)));
    const targetStarted = new Promise<void>((resolve) => {
        child.stdout!.on("data", (chunk: Buffer) => {
            stdout += chunk.toString();
            const lines = stdout.split("\n");
            stdout = lines.pop()!;
            for (const line of lines) {
                const ack = /^ack (\d+)$/.exec(line);
                if (ack !== null) {
                    acks.push(Number(ack[1]));
                }
                if (line === `start ${target}`) {
                    resolve();
                }
            }
        });
    });
    child.stderr!.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000); // a child that never gets there is a failure below, not a hang
    await Promise.race([targetStarted, exited]);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    child.kill("SIGKILL");
    const ended = await exited;
    clearTimeout(timer);
    expect(ended, `the child was killed, not ended by itself. stderr:\n${stderr}`).toBe("SIGKILL");
    expect(acks.length, `the child saved at least once before the kill. stderr:\n${stderr}`).toBeGreaterThan(0);
    expect(acks).toEqual(acks.map((_, index) => first + index));
    return acks;
}

describe(`the store survives kill -9 mid-save (seed ${seed})`, () => {
    let dataDir: string;
    const next = random(seed);

    beforeAll(() => {
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-crash-"));
    });

    afterAll(() => {
        fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("chat appends: every acknowledged message is back and intact, at most the one in flight is missing or set aside, earlier lines never damaged", async () => {
        let numSaved = 0;
        let numTruncated = 0;
        let numInFlightKept = 0;
        for (let round = 0; round < NUM_ROUNDS; round++) {
            // Killed while a big message is saved: after 1 to 3 saves, at the first big one from there.
            let target = numSaved + 1 + Math.floor(next() * 3);
            while (!isBigMessage(target)) {
                target++;
            }
            const acks = await saveUntilKilled("journal", dataDir, numSaved, target, next() * MAX_KILL_DELAY_MS);
            const lastAck = acks.at(-1)!;

            const store = await WorkspaceStore.open(dataDir);
            const { workspaces, problems } = await store.load();
            await store.close();
            const messages = workspaces.find((workspace) => workspace.id === crashWorkspace.id)!.messages;
            const context = `round ${round}, seed ${seed}, last ack ${lastAck}`;
            // In order, from the first message ever written, each exactly as written.
            expect(
                messages.map((message) => message.id),
                context
            ).toEqual(messages.map((_, index) => `m-${index}`));
            for (const message of messages) {
                expect(message, context).toEqual(crashMessage(Number(message.id.slice(2))));
            }
            // Every acknowledged save is there; beyond them at most the one that was being written.
            expect(messages.length, context).toBeGreaterThanOrEqual(lastAck + 1);
            expect(messages.length, context).toBeLessThanOrEqual(lastAck + 2);
            numInFlightKept += messages.length - (lastAck + 1);
            // Only ever the last line, cut short: never a corrupt line, never an earlier one.
            expect(problems.length, context).toBeLessThanOrEqual(1);
            for (const problem of problems) {
                expect(problem, context).toMatchObject({ kind: "truncated", line: messages.length + 1 });
                expect(fs.existsSync(problem.copy), context).toBe(true);
                numTruncated++;
            }
            numSaved = messages.length;
        }
        console.log(
            `seed ${seed}: ${numSaved} messages over ${NUM_ROUNDS} kills; ${numTruncated} kill(s) cut a line short (set aside), ` +
                `${numInFlightKept} unacknowledged message(s) had reached the disk whole, the rest were killed before their write.`
        );
    });

    it("the workspace list: a kill during its atomic write leaves the old list or the new, never a torn one", async () => {
        let numSaved = 0;
        const paths = storePaths(dataDir);
        for (let round = 0; round < NUM_ROUNDS; round++) {
            const acks = await saveUntilKilled(
                "metadata",
                dataDir,
                numSaved,
                numSaved + 1 + Math.floor(next() * 3),
                next() * MAX_KILL_DELAY_MS
            );
            const lastAck = acks.at(-1)!;
            const context = `round ${round}, seed ${seed}, last ack ${lastAck}`;
            // The file itself, before the store touches it: whole JSON, the last acknowledged version or the one after.
            const onDisk = JSON.parse(fs.readFileSync(paths.metadata, "utf8")) as {
                v: number;
                workspaces: { name: string; settings: { systemPrompt: string } }[];
            };
            const entry = onDisk.workspaces.find((workspace) => workspace.name.startsWith("Version "))!;
            const version = Number(entry.name.slice("Version ".length));
            expect([lastAck, lastAck + 1], context).toContain(version);
            expect(entry.settings.systemPrompt, context).toBe(crashMeta(version).settings.systemPrompt);

            const store = await WorkspaceStore.open(dataDir);
            const { workspaces, problems } = await store.load();
            await store.close();
            expect(problems, context).toEqual([]);
            expect(workspaces.find((workspace) => workspace.id === crashWorkspace.id)?.name, context).toBe(`Version ${version}`);
            // The chat from the test before is untouched by list writes.
            expect(workspaces[0]!.messages.length, context).toBeGreaterThan(0);
            expect(
                fs.readdirSync(paths.directory).filter((name) => name.endsWith(".tmp")),
                "no temporary file outlives the next start"
            ).toEqual([]);
            numSaved = version + 1;
        }
    });
});
