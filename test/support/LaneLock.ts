import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { TestLane } from "./testLanes.js";

/** How often a file waiting for its lane looks again, in milliseconds. */
export const LANE_POLL_MS = 200;

/** The longest a file waits for its lane, in milliseconds: longer than any lane's whole run. */
export const MAX_LANE_WAIT_MS = 60 * 60 * 1000;

/** The lanes stayed held by live processes past {@link MAX_LANE_WAIT_MS}. */
export class LaneWaitTimeoutError extends Error {
    readonly code = "LANE_WAIT_TIMEOUT";

    constructor(locks: readonly LaneLock[], waitedMs: number) {
        const holders = locks.map((lock) => `lane ${lock.lane} by process ${lock.ownerPid() ?? "(unknown)"}`).join(", ");
        super(
            `Test lanes still held after ${waitedMs} ms (${holders}); ` +
                `a test file in one of them hangs: end that process or rerun the file alone.`
        );
        this.name = "LaneWaitTimeoutError";
    }
}

/** The folder of one vitest run's lanes (`runId` is the vitest process's pid). */
export function laneRunDirectory(runId: string): string {
    return join(tmpdir(), `kvault-test-lanes-${runId}`);
}

/**
 * One lane of a vitest run: a directory that exists while a worker process holds the lane, with the
 * holder's pid inside, so a lane held by a worker that died is taken over rather than waited for.
 * `runId` keeps lanes of two runs on one machine apart (it is the vitest process's pid).
 */
export class LaneLock {
    readonly #directory: string;
    #held = false;

    constructor(
        readonly lane: TestLane,
        runId: string
    ) {
        this.#directory = join(laneRunDirectory(runId), `lane-${lane}`);
    }

    /** Waits until this lane is free (or its holder has died) and takes it. */
    async acquire(): Promise<void> {
        const started = Date.now();
        while (Date.now() - started < MAX_LANE_WAIT_MS) {
            if (this.tryAcquire()) {
                return;
            }
            await sleep(LANE_POLL_MS);
        }
        throw new LaneWaitTimeoutError([this], Date.now() - started);
    }

    /** Takes the lane if it is free or its holder has died; false while a live process holds it. */
    tryAcquire(): boolean {
        mkdirSync(join(this.#directory, ".."), { recursive: true });
        if (this.#tryTake()) {
            return true;
        }
        const ownerPid = this.ownerPid();
        if (ownerPid === undefined || isAlive(ownerPid)) {
            return false;
        }
        rmSync(this.#directory, { recursive: true, force: true });
        return this.#tryTake();
    }

    /** Idempotent; only the holder removes the lane. */
    release(): void {
        if (!this.#held) {
            return;
        }
        this.#held = false;
        if (this.ownerPid() === process.pid) {
            rmSync(this.#directory, { recursive: true, force: true });
        }
    }

    #tryTake(): boolean {
        try {
            mkdirSync(this.#directory);
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "EEXIST") {
                return false;
            }
            throw error;
        }
        writeFileSync(join(this.#directory, "owner"), String(process.pid));
        this.#held = true;
        return true;
    }

    /** The holder's pid; undefined while the lane is free or its holder has made the directory but not yet written its pid. */
    ownerPid(): number | undefined {
        try {
            const pid = Number(readFileSync(join(this.#directory, "owner"), "utf8"));
            return Number.isInteger(pid) && pid > 0 ? pid : undefined;
        } catch {
            return undefined;
        }
    }
}

function isAlive(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        return (error as NodeJS.ErrnoException).code === "EPERM";
    }
}
