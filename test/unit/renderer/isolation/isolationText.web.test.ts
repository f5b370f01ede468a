import { describe, expect, it } from "vitest";
import type { AuditSummary, DrillReport } from "../../../../contract/isolation";
import {
    auditHeadline, auditScope, drillVerdict, failureModesText, formatDuration, replayVerdict, shortRequestId, unlistedViolations, visibleToken
} from "../../../../renderer/isolation/isolationText";

const audit: AuditSummary = {
    ok: true, violations: [], numViolations: 0, numPagesChecked: 96, numSealedPagesVerified: 12, numFreePagesScanned: 84, durationMs: 0.42, at: 5_000
};

const report: DrillReport = {
    id: "flipped-byte", title: "A byte of a sealed page changes in transit", failureModes: [13], guard: "per-page checksums recomputed before decode loads",
    guardFired: true, guardError: { code: "handoff_checksum_mismatch", message: "Page 3's checksum does not match." }, victimClean: true,
    leakObservedWithGuardOff: true, leakEvidence: "Decode loaded a page with 1 changed byte.", durationMs: 9_812
};

describe("isolationText", () => {
    it("formats durations from sub-millisecond audits to multi-second drills", () => {
        expect(formatDuration(0.42)).toBe("0.4 ms");
        expect(formatDuration(12.6)).toBe("13 ms");
        expect(formatDuration(9_812)).toBe("9.8 s");
        expect(formatDuration(-1)).toBe("0.0 ms");
    });

    it("says what the audit found and what it checked", () => {
        expect(auditHeadline(audit)).toBe("OK: I1–I7 hold");
        expect(auditScope(audit)).toBe("96 pages checked (12 sealed re-checksummed, 84 free scanned for zeros) in 0.4 ms");
        const failed: AuditSummary = { ...audit, ok: false, numViolations: 23, violations: Array.from({ length: 20 }, () => ({ invariant: "I6", message: "Free page 4 holds non-zero bytes." })) };
        expect(auditHeadline(failed)).toBe("23 violations of I1–I7");
        expect(auditHeadline({ ...failed, numViolations: 1 })).toBe("1 violation of I1–I7");
        expect(unlistedViolations(failed)).toBe(3);
        expect(unlistedViolations(audit)).toBe(0);
    });

    it("gives a replay's verdict: identical, or the first divergence with the tokens made visible", () => {
        expect(replayVerdict({ requestId: "r", numTokens: 5, identical: true, durationMs: 30 })).toBe("Identical over 5 tokens");
        expect(replayVerdict({ requestId: "r", numTokens: 1, identical: true, durationMs: 30 })).toBe("Identical over 1 token");
        expect(replayVerdict({ requestId: "r", numTokens: 8, identical: false, firstDivergence: { index: 2, served: " the", replayed: "\n" }, durationMs: 30 }))
            .toBe("Diverged at token 3 of 8: served “ the”, replayed “\\n”");
        expect(replayVerdict({ requestId: "r", numTokens: 8, identical: false, firstDivergence: { index: 7, served: "x", replayed: "" }, durationMs: 30 }))
            .toBe("Diverged at token 8 of 8: served “x”, replayed nothing");
        expect(visibleToken("a\u0001\t")).toBe("“a\\u0001\\t”");
    });

    it("reads a drill's report out, and passes it only when the guard caught it, the victim is clean and the leak showed with the guard off", () => {
        expect(drillVerdict(report)).toEqual({
            passed: true,
            guard: "Guard fired: handoff_checksum_mismatch",
            victim: "Victim clean: no byte of another request reached its KV or output",
            leak: "Leak observed with the guard off"
        });
        expect(drillVerdict({ ...report, guardError: null }).guard).toBe("Guard held: the request was served and nothing of another request reached it");
        expect(drillVerdict({ ...report, guardFired: false, guardError: null, victimClean: false })).toMatchObject({ passed: false, guard: "Guard did not fire", victim: expect.stringMatching(/^Victim NOT clean/) });
        expect(drillVerdict({ ...report, leakObservedWithGuardOff: false })).toMatchObject({ passed: false, leak: "No leak with the guard off: the drill has no teeth" });
        expect(failureModesText([13])).toBe("Failure mode 13");
        expect(failureModesText([3, 4, 7])).toBe("Failure modes 3, 4, 7");
    });

    it("shortens request ids for the panel", () => {
        expect(shortRequestId("turn-0123456789abcdef0123456789abcdef")).toBe("turn-01234567…");
        expect(shortRequestId("host-turn-1")).toBe("host-turn-1");
    });
});
