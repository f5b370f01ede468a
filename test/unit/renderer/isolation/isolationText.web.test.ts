import { describe, expect, it } from "vitest";
import type { AuditSummary, CanaryProbeResult, CanaryReport, DrillReport, FailureModeSlug } from "../../../../contract/isolation.js";
import {
    auditCost,
    auditHeadline,
    auditScope,
    canaryHeadline,
    canaryScope,
    drillVerdict,
    formatMicros,
    probeNumbers,
    failureModesText,
    formatDuration,
    replayVerdict,
    shortRequestId,
    unlistedViolations,
    visibleToken
} from "../../../../renderer/isolation/isolationText.js";

const audit: AuditSummary = {
    ok: true,
    violations: [],
    numViolations: 0,
    numPagesChecked: 96,
    numSealedPagesVerified: 12,
    numFreePagesScanned: 84,
    durationMs: 0.42,
    at: 5_000
};

const report: DrillReport = {
    id: "flipped-byte",
    title: "A byte of a sealed page changes in transit",
    failureModes: ["flipped-byte"],
    guard: "per-page checksums recomputed before decode loads",
    guardFired: true,
    guardError: { code: "handoff_checksum_mismatch", message: "Page 3's checksum does not match." },
    victimClean: true,
    leakObservedWithGuardOff: true,
    leakEvidence: "Decode loaded a page with 1 changed byte.",
    durationMs: 9_812
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
        const failed: AuditSummary = {
            ...audit,
            ok: false,
            numViolations: 23,
            violations: Array.from({ length: 20 }, () => ({ invariant: "I6", message: "Free page 4 holds non-zero bytes." }))
        };
        expect(auditHeadline(failed)).toBe("23 violations of I1–I7");
        expect(auditHeadline({ ...failed, numViolations: 1 })).toBe("1 violation of I1–I7");
        expect(unlistedViolations(failed)).toBe(3);
        expect(unlistedViolations(audit)).toBe(0);
    });

    it("gives a replay's verdict: identical, or the first divergence with the tokens made visible", () => {
        expect(replayVerdict({ requestId: "r", numTokens: 5, identical: true, durationMs: 30 })).toBe("Identical over 5 tokens");
        expect(replayVerdict({ requestId: "r", numTokens: 1, identical: true, durationMs: 30 })).toBe("Identical over 1 token");
        expect(
            replayVerdict({
                requestId: "r",
                numTokens: 8,
                identical: false,
                firstDivergence: { index: 2, served: " the", replayed: "\n" },
                durationMs: 30
            })
        ).toBe("Diverged at token 3 of 8: served “ the”, replayed “\\n”");
        expect(
            replayVerdict({
                requestId: "r",
                numTokens: 8,
                identical: false,
                firstDivergence: { index: 7, served: "x", replayed: "" },
                durationMs: 30
            })
        ).toBe("Diverged at token 8 of 8: served “x”, replayed nothing");
        expect(visibleToken("a\u0001\t")).toBe("“a\\u0001\\t”");
    });

    it("reads a drill's report out, and passes it only when the guard caught it, the victim is clean and the leak showed with the guard off", () => {
        expect(drillVerdict(report)).toEqual({
            passed: true,
            guard: "Guard fired: handoff_checksum_mismatch",
            victim: "Victim clean: no byte of another request reached its KV or output",
            leak: "Leak observed with the guard off"
        });
        expect(drillVerdict({ ...report, guardError: null }).guard).toBe(
            "Guard held: the request was served and nothing of another request reached it"
        );
        expect(drillVerdict({ ...report, guardFired: false, guardError: null, victimClean: false })).toMatchObject({
            passed: false,
            guard: "Guard did not fire",
            victim: expect.stringMatching(/^Victim NOT clean/)
        });
        expect(drillVerdict({ ...report, leakObservedWithGuardOff: false })).toMatchObject({
            passed: false,
            leak: "No leak with the guard off: the drill has no teeth"
        });
        expect(failureModesText(["flipped-byte"])).toBe("Failure mode: flipped byte");
        expect(failureModesText(["late-write-after-cancel", "reuse-under-reader", "replayed-completion"])).toBe(
            "Failure modes: late write after cancel, pages reused under a reader, replayed completion (ABA)"
        );
        expect(failureModesText(["from-a-newer-engine" as FailureModeSlug])).toBe("Failure mode: from-a-newer-engine");
    });

    it("shortens request ids for the panel", () => {
        expect(shortRequestId("turn-0123456789abcdef0123456789abcdef")).toBe("turn-01234567…");
        expect(shortRequestId("host-turn-1")).toBe("host-turn-1");
    });
});

describe("isolationText: the audit's cost and the canary", () => {
    it("gives the audit's cost per page, its longest pause, and the pages that changed under the scan", () => {
        expect(auditCost(audit)).toBeUndefined(); // an engine that does not report it
        const costed: AuditSummary = {
            ...audit,
            numPagesChecked: 65_536,
            numFreePagesScanned: 65_000,
            numSealedPagesVerified: 536,
            numPagesChangedDuringScan: 0,
            cost: { metadataMs: 1.3, byteScanMs: 52, numSlices: 48, longestPauseMs: 1.3 }
        };
        expect(auditCost(costed)).toBe("metadata 0.020 µs a page, byte scan 0.8 µs a page in 48 slices, longest pause 1.3 ms");
        expect(
            auditCost({
                ...costed,
                numFreePagesScanned: 0,
                numSealedPagesVerified: 0,
                numPagesChangedDuringScan: 12,
                cost: { ...costed.cost!, numSlices: 0 }
            })
        ).toBe("metadata 0.020 µs a page, no byte scan, longest pause 1.3 ms; 12 changed during the scan, skipped");
        expect(formatMicros(12.4)).toBe("12 µs");
    });

    it("says whether the canary found A in B, what A was sent, and each probe's figures", () => {
        const probes: CanaryProbeResult[] = [
            {
                id: "kv-pages",
                title: "B's pages hold none of A's KV",
                outcome: "passed",
                evidence: "none",
                numbers: { numRowMatches: 0, numSecretRows: 1_457 }
            },
            { id: "logprobs", title: "fresh", outcome: "skipped", evidence: "no token", numbers: { maxAbsDiffNats: 0.00012 } }
        ];
        const canary: CanaryReport = {
            passed: true,
            modelName: "m",
            markers: ["KV-CANARY-AAAAAAAAAAAA", "KV-CANARY-BBBBBBBBBBBB"],
            fillerTokens: 362,
            promptTokens: 460,
            numPagesA: 29,
            pageTokens: 16,
            probes,
            numFreePagesBefore: 96,
            numFreePagesAfter: 96,
            durationMs: 1_600
        };
        expect(canaryHeadline(canary)).toBe("Passed: 1 of 2 probes found nothing of A in B");
        expect(canaryHeadline({ ...canary, passed: false, probes: [{ ...probes[0]!, outcome: "failed" }, probes[1]!] })).toBe(
            "LEAK: 1 of 2 probes found workspace A's data in workspace B"
        );
        expect(canaryScope(canary)).toBe("A: 460 tokens of prompt, 362 of filler between the markers, 29 pages of 16 tokens");
        expect(canaryScope({ ...canary, numPagesA: 0 })).toMatch(/, evaluated in place$/);
        expect(probeNumbers(probes[0]!)).toBe("numRowMatches 0 · numSecretRows 1,457");
        expect(probeNumbers(probes[1]!)).toBe("maxAbsDiffNats 0.0001");
    });
});
