import { ViolationLog, type AuditCost, type AuditOptions, type AuditResult } from "../pages/AuditResult.js";
import type { PagePool } from "../pages/PagePool.js";
import type { ByteScanResult } from "../pages/scanPoolBytes.js";

export interface SlicedAuditOptions {
    /** Read free pages for zeros (I6) and re-checksum sealed pages (I7); default true. */
    readonly byteScans?: boolean;
    /** Longest one byte-scan slice holds the thread, ms; see `scanPoolBytes`. */
    readonly sliceBudgetMs?: number;
    /** Tests only: at most this many pages per slice. */
    readonly maxPagesPerSlice?: number;
}

/** The whole engine's audit, with what it cost the thread. */
export type SlicedAuditResult = AuditResult & { readonly cost: AuditCost };

/** What the audit needs of the engine: `KvEngine` satisfies it. */
export interface AuditedEngine {
    readonly pool: PagePool;
    audit(options: AuditOptions): AuditResult;
}

/**
 * The whole audit without stalling decode, whatever the pool's size: the metadata pass (I1–I5 and
 * the engine's own checks; O(numPages) over typed arrays) in one step, then the byte scans (I6,
 * I7) time-sliced on the same thread (`PagePool.scanBytes`).
 *
 * Why slices and not a worker thread: the arena is an ordinary ArrayBuffer a worker cannot read,
 * and a SharedArrayBuffer would let a worker race the pool's writes and scrubs, needing the same
 * re-check of every page afterwards that slicing gets for free (a slice reads a page's state and
 * bytes in one synchronous step). On a machine of two cores a worker would also take the core
 * decode's threads use; a slice takes at most `sliceBudgetMs` of the event loop.
 */
export async function runSlicedAudit(engine: AuditedEngine, options: SlicedAuditOptions = {}): Promise<SlicedAuditResult> {
    const startedAt = performance.now();
    const metadata = engine.audit({ scanFreePages: false, verifySealedPages: false });
    const metadataMs = performance.now() - startedAt;
    const byteScans = options.byteScans ?? true;
    const scan: ByteScanResult | undefined =
        byteScans && !engine.pool.isDisposed
            ? await engine.pool.scanBytes({ sliceBudgetMs: options.sliceBudgetMs, maxPagesPerSlice: options.maxPagesPerSlice })
            : undefined;
    const log = new ViolationLog();
    log.add(metadata);
    if (scan !== undefined) {
        log.add(scan);
    }
    return {
        ok: log.numViolations === 0,
        violations: log.violations,
        numViolations: log.numViolations,
        numPagesChecked: metadata.numPagesChecked,
        numFreePagesScanned: scan?.numFreePagesScanned ?? 0,
        numSealedPagesVerified: scan?.numSealedPagesVerified ?? 0,
        numPagesChangedDuringScan: scan?.numPagesChangedDuringScan ?? 0,
        durationMs: performance.now() - startedAt,
        cost: {
            metadataMs,
            byteScanMs: scan?.busyMs ?? 0,
            numSlices: scan?.numSlices ?? 0,
            longestPauseMs: Math.max(metadataMs, scan?.longestSliceMs ?? 0)
        }
    };
}
