import fs from "node:fs";
import os from "node:os";
import type { MachineMemory } from "./planEngineMemory.js";

/**
 * This machine's free memory for an engine plan. Linux: /proc/meminfo's MemAvailable (what the
 * kernel could give a new process, page cache included), which os.freemem() understates; elsewhere
 * os.freemem(). The GPU's free memory is not read in the host (node-llama-cpp lives in the
 * engine process): null, and the plan says it is not measured.
 */
export function machineMemory(): MachineMemory {
    return { freeRamBytes: availableRamBytes(), freeVramBytes: null };
}

function availableRamBytes(): number {
    try {
        const match = /^MemAvailable:\s+(\d+) kB$/m.exec(fs.readFileSync("/proc/meminfo", "utf8"));
        if (match !== null) {
            return Number(match[1]) * 1024;
        }
    } catch {
        // not Linux, or /proc is not mounted: os.freemem() below
    }
    return os.freemem();
}
