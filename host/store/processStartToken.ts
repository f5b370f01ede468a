import fs from "node:fs";

/**
 * When the process `pid` started, as the OS tells it, to tell a process from a later one that
 * got the same pid: on Linux the `starttime` field of /proc/PID/stat (clock ticks since boot).
 * Null where the OS has no such file (macOS, Windows) or the process is gone.
 */
export function processStartToken(pid: number): string | null {
    let stat: string;
    try {
        stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
        return null;
    }
    // "PID (COMM) STATE PPID …": COMM may hold spaces and parentheses, so fields count from the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // starttime is field 22 of the whole line, the 20th after COMM.
    const startTime = fields[19];
    return startTime !== undefined && /^\d+$/.test(startTime) ? startTime : null;
}
