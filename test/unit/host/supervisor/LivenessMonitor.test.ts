import { describe, expect, it } from "vitest";
import { canServe, describeHealth } from "../../../../host/supervisor/EngineHealth.js";
import { EngineCallTimeoutError, EngineCrashedError, EngineUnavailableError } from "../../../../host/supervisor/engineHostErrors.js";
import { LivenessMonitor } from "../../../../host/supervisor/LivenessMonitor.js";

const options = { pingIntervalMs: 5, pingDeadlineMs: 40 };

async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    for (const start = performance.now(); !condition(); ) {
        if (performance.now() - start > timeoutMs) {
            throw new Error(`Waited ${timeoutMs} ms for ${what}.`);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
    }
}

describe("LivenessMonitor", () => {
    it("pings one at a time, each with the deadline, for as long as the engine answers", async () => {
        const deadlines: number[] = [];
        let numInFlight = 0;
        let maxInFlight = 0;
        const unresponsive: number[] = [];
        const monitor = new LivenessMonitor(
            async (deadlineMs) => {
                deadlines.push(deadlineMs);
                maxInFlight = Math.max(maxInFlight, ++numInFlight);
                await new Promise((resolve) => setTimeout(resolve, 2));
                numInFlight--;
                return {};
            },
            options,
            (waitedMs) => unresponsive.push(waitedMs)
        );
        await waitUntil(() => deadlines.length >= 5, 5_000, "five pings");
        monitor.dispose();
        monitor.dispose(); // idempotent
        expect(new Set(deadlines)).toEqual(new Set([40]));
        expect(maxInFlight).toBe(1);
        expect(unresponsive).toEqual([]);
    });

    it("reports a ping that timed out once, with the milliseconds waited, and pings no more", async () => {
        let numPings = 0;
        const unresponsive: number[] = [];
        new LivenessMonitor(
            (deadlineMs) => {
                numPings++;
                return Promise.reject(new EngineCallTimeoutError(`no answer within ${deadlineMs} ms`));
            },
            options,
            (waitedMs) => unresponsive.push(waitedMs)
        );
        await waitUntil(() => unresponsive.length > 0, 5_000, "the engine reported unresponsive");
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(unresponsive).toEqual([40]);
        expect(numPings).toBe(1);
    });

    it("stops quietly when a ping fails otherwise (the process exited): the connection reports that", async () => {
        let numPings = 0;
        const unresponsive: number[] = [];
        new LivenessMonitor(
            () => {
                numPings++;
                return Promise.reject(new EngineCrashedError(7, null, "SIGKILL", "call"));
            },
            options,
            (waitedMs) => unresponsive.push(waitedMs)
        );
        await waitUntil(() => numPings > 0, 5_000, "a ping");
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(numPings).toBe(1);
        expect(unresponsive).toEqual([]);
    });
});

describe("describeHealth", () => {
    const base = { downError: undefined, restartReason: undefined, pid: 42, numTurns: 0 };

    it("serves when ready or busy, and says which", () => {
        expect(describeHealth({ ...base, state: "running" })).toEqual({
            state: "ready",
            reason: "Engine process 42 answers its liveness pings and runs no turn."
        });
        expect(describeHealth({ ...base, state: "running", numTurns: 3 })).toEqual({
            state: "busy",
            reason: "Engine process 42 is running 3 turn(s); new ones queue behind them."
        });
        expect(canServe("ready")).toBe(true);
        expect(canServe("busy")).toBe(true);
    });

    it("cannot serve while starting, restarting or failed, and says why", () => {
        expect(describeHealth({ ...base, state: "restarting", restartReason: "Engine process 42 did not answer." })).toEqual({
            state: "restarting",
            reason: "Engine process 42 did not answer."
        });
        const error = new EngineUnavailableError("The engine process stopped again after 5 restarts within 60 s.");
        expect(describeHealth({ ...base, state: "down", downError: error })).toEqual({
            state: "failed",
            reason: error.message,
            error: { code: "engine_unavailable", message: error.message }
        });
        expect(describeHealth({ ...base, state: "disposed" })).toMatchObject({ state: "failed" });
        for (const state of ["starting", "restarting", "failed"] as const) {
            expect(canServe(state)).toBe(false);
        }
    });
});
