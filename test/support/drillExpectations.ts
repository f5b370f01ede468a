import { expect } from "vitest";
import type { DrillReport } from "../../contract/isolation.js";

/** Each drill's guard and the error it fires with; null where the guard prevents rather than refuses. */
export const expectedGuardErrors: Readonly<Record<string, string | null>> = {
    "foreign-manifest": "handoff_page_owner_mismatch",
    "flipped-byte": "handoff_checksum_mismatch",
    "skipped-scrub": null, // prevention: the pages were zero before the victim got them
    "late-write": "stale_write_refused",
    "undersized-prefill-pool": "context_length_exceeded",
    "dropped-pages": "handoff_page_count_mismatch",
    "replayed-completion": "stale_completion_ignored"
};

/** A drill's report: with its guard on it fired with its own error and the victim stayed clean; with it off the leak was seen. */
export function expectDrillHeld(report: DrillReport, id: string): void {
    expect(report.id).toBe(id);
    expect(report.guardFired).toBe(true);
    expect(report.guardError?.code ?? null).toBe(expectedGuardErrors[id]);
    expect(report.victimClean).toBe(true);
    expect(report.leakObservedWithGuardOff, report.leakEvidence).toBe(true);
    expect(report.leakEvidence.length).toBeGreaterThan(20);
}
