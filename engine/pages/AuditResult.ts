import { pageId as toPageId, type PageId } from "../core/ids.js";

export type AuditInvariant = "I1" | "I2" | "I3" | "I4" | "I5" | "I6" | "I7";

export interface AuditViolation {
    readonly invariant: AuditInvariant;
    readonly pageId?: PageId;
    readonly message: string;
}

/** Which byte scans an audit runs besides the metadata checks (I1–I5). */
export interface AuditOptions {
    /** I6: read every free page's bytes for zeros. O(free bytes), a native memcmp (its rate: docs/measurements.md). */
    readonly scanFreePages?: boolean;
    /** The pool's share of I7: recompute every sealed page's checksum. O(sealed bytes). */
    readonly verifySealedPages?: boolean;
}

/** What an audit that yields between byte-scan slices cost the engine's thread (ms). */
export interface AuditCost {
    /** The metadata pass: one synchronous step. */
    readonly metadataMs: number;
    /** Time the byte scan's slices held the thread, the yields between them excluded. */
    readonly byteScanMs: number;
    readonly numSlices: number;
    /** The longest the audit held the thread at once: the metadata pass or a slice. */
    readonly longestPauseMs: number;
}

/**
 * The result of every audit: the pool's (`PagePool.audit`), the engine's over the pool and its own
 * bookkeeping (`auditEngine`), the byte scans alone, and the whole audit in slices (`runSlicedAudit`).
 */
export interface AuditResult {
    readonly ok: boolean;
    /** The first `MAX_REPORTED_VIOLATIONS`, in the order found: the pool's checks first, by page. */
    readonly violations: readonly AuditViolation[];
    readonly numViolations: number;
    readonly numPagesChecked: number;
    readonly numFreePagesScanned: number;
    readonly numSealedPagesVerified: number;
    /**
     * Pages free or sealed when a sliced byte scan started whose state or generation had changed
     * when their slice came: skipped, not judged. Always 0 for an audit done in one step.
     */
    readonly numPagesChangedDuringScan: number;
    /** From start to end, any yields between slices included. */
    readonly durationMs: number;
    /** Only for an audit that yields between slices. */
    readonly cost?: AuditCost;
}

export const MAX_REPORTED_VIOLATIONS = 100;

/** Collects an audit's violations: counts every one, keeps the first `MAX_REPORTED_VIOLATIONS`. */
export class ViolationLog {
    readonly violations: AuditViolation[] = [];
    numViolations = 0;

    report(invariantName: AuditInvariant, page: number | undefined, message: string): void {
        this.numViolations++;
        if (this.violations.length < MAX_REPORTED_VIOLATIONS) {
            this.violations.push(
                page === undefined ? { invariant: invariantName, message } : { invariant: invariantName, pageId: toPageId(page), message }
            );
        }
    }

    /** Takes in another audit's violations after this one's. */
    add(other: Pick<AuditResult, "violations" | "numViolations">): void {
        this.numViolations += other.numViolations;
        this.violations.push(...other.violations.slice(0, Math.max(0, MAX_REPORTED_VIOLATIONS - this.violations.length)));
    }
}
