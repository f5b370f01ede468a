import { execFileSync } from "node:child_process";
import os from "node:os";
import { testLanes, type TestLane } from "./testLanes.js";

/**
 * The cores of `lane`: the machine's cores split evenly among the lanes, `[start, end)` by index.
 * Undefined on a machine with fewer cores than lanes, where a lane cannot have a core of its own.
 */
export function laneCores(lane: TestLane, numCores: number): { readonly start: number; readonly end: number } | undefined {
    if (numCores < testLanes.length) {
        return undefined;
    }
    const index = testLanes.indexOf(lane);
    const start = Math.floor((index * numCores) / testLanes.length);
    const end = Math.floor(((index + 1) * numCores) / testLanes.length);
    return { start, end };
}

/**
 * Pins this worker process (every thread it has, and so every process it starts later: the engine,
 * a server, Chromium) to its lane's cores, of the run's `numCores` (the main process's count: a
 * worker that ran an earlier file may still be pinned). The engine sizes its thread pools by the
 * cores it may run on (os.availableParallelism follows the affinity), so each lane's native threads
 * fill their own cores and never wait on the other lane's. Returns the cores, or undefined where none were set.
 */
export function pinToLaneCores(lane: TestLane, numCores: number): string | undefined {
    const cores = laneCores(lane, numCores);
    return cores === undefined ? undefined : pinToCores(`${cores.start}-${cores.end - 1}`);
}

/**
 * Gives this worker process every one of the run's `numCores` again: a file that holds both lanes,
 * or runs alone, in a worker whose earlier file was pinned to one lane. Returns the cores, or
 * undefined where the worker already has them all.
 */
export function pinToAllCores(numCores: number): string | undefined {
    return os.availableParallelism() >= numCores ? undefined : pinToCores(`0-${numCores - 1}`);
}

function pinToCores(list: string): string {
    execFileSync("taskset", ["--all-tasks", "--cpu-list", "--pid", list, String(process.pid)], { stdio: "ignore" });
    return list;
}
