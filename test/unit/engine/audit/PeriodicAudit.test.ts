import { afterEach, describe, expect, it, vi } from "vitest";
import type { AuditSummary } from "../../../../contract/isolation.js";
import { auditIntervalFromEnvironment, PeriodicAudit } from "../../../../engine/audit/PeriodicAudit.js";

const clean = (at: number): AuditSummary => ({
    ok: true,
    violations: [],
    numViolations: 0,
    numPagesChecked: 8,
    numSealedPagesVerified: 0,
    numFreePagesScanned: 8,
    durationMs: 1,
    at
});
const dirty = (at: number): AuditSummary => ({
    ...clean(at),
    ok: false,
    numViolations: 1,
    violations: [{ invariant: "I6", message: "free page 3 is not all zero" }]
});

afterEach(() => {
    vi.useRealTimers();
});

describe("PeriodicAudit", () => {
    it("audits every interval after the last one ended, never two at once, and keeps the last one that found a violation", async () => {
        vi.useFakeTimers();
        const answers = [clean(1), dirty(2), clean(3)];
        let numStarted = 0;
        let finish!: () => void;
        const audit: PeriodicAudit = new PeriodicAudit(() => {
            numStarted++;
            const summary = answers.shift()!;
            return new Promise((resolve) => {
                finish = () => {
                    audit.record(summary);
                    resolve(summary);
                };
            });
        }, 1_000);
        audit.start();
        expect(audit.feed()).toEqual({ intervalMs: 1_000, numRuns: 0, numRunsWithViolations: 0 });
        await vi.advanceTimersByTimeAsync(1_000);
        expect(numStarted).toBe(1);
        await vi.advanceTimersByTimeAsync(5_000); // the first is still running: no second starts
        expect(numStarted).toBe(1);
        finish();
        await vi.advanceTimersByTimeAsync(999);
        expect(numStarted).toBe(1);
        await vi.advanceTimersByTimeAsync(1);
        expect(numStarted).toBe(2);
        finish();
        await vi.advanceTimersByTimeAsync(1_000);
        finish();
        await vi.advanceTimersByTimeAsync(0);
        expect(audit.feed()).toEqual({
            intervalMs: 1_000,
            numRuns: 3,
            numRunsWithViolations: 1,
            latest: clean(3),
            lastWithViolations: dirty(2)
        });
        await audit.stop();
        await vi.advanceTimersByTimeAsync(10_000);
        expect(numStarted).toBe(3);
        expect(audit.isRunning).toBe(false);
    });

    it("logs a failed audit and goes on; stop waits for the audit in flight", async () => {
        vi.useFakeTimers();
        const logged: string[] = [];
        let numStarted = 0;
        let finish!: () => void;
        const audit = new PeriodicAudit(
            () => {
                numStarted++;
                if (numStarted === 1) {
                    return Promise.reject(new Error("the pool was disposed"));
                }
                return new Promise((resolve) => {
                    finish = () => resolve(clean(9));
                });
            },
            100,
            (line) => logged.push(line)
        );
        audit.start();
        await vi.advanceTimersByTimeAsync(200);
        expect(logged).toEqual(["the periodic audit failed: the pool was disposed"]);
        expect(numStarted).toBe(2);
        let stopped = false;
        const stopping = audit.stop().then(() => {
            stopped = true;
        });
        await vi.advanceTimersByTimeAsync(0);
        expect(stopped).toBe(false);
        finish();
        await stopping;
        await vi.advanceTimersByTimeAsync(1_000);
        expect(numStarted).toBe(2);
    });

    it("refuses an interval it cannot keep", () => {
        expect(() => new PeriodicAudit(() => Promise.resolve(clean(0)), 0)).toThrow(RangeError);
    });
});

describe("auditIntervalFromEnvironment", () => {
    it("audits every second by default, takes a whole number of ms from 100, and 0 for none", () => {
        expect(auditIntervalFromEnvironment({})).toEqual({ intervalMs: 1_000 });
        expect(auditIntervalFromEnvironment({ KVAULT_AUDIT_INTERVAL_MS: "250" })).toEqual({ intervalMs: 250 });
        expect(auditIntervalFromEnvironment({ KVAULT_AUDIT_INTERVAL_MS: "0" })).toEqual({ intervalMs: undefined });
        expect(auditIntervalFromEnvironment({ KVAULT_AUDIT_INTERVAL_MS: "5" })).toMatchObject({
            intervalMs: 1_000,
            problem: expect.stringMatching(/KVAULT_AUDIT_INTERVAL_MS is "5"/)
        });
        expect(auditIntervalFromEnvironment({ KVAULT_AUDIT_INTERVAL_MS: "soon" })).toMatchObject({
            intervalMs: 1_000,
            problem: expect.any(String)
        });
    });
});
