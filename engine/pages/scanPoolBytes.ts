import { pageId as toPageId } from "../core/ids.js";
import type { PageArena } from "./PageArena.js";
import { MAX_REPORTED_VIOLATIONS, type AuditViolation } from "./PagePoolAudit.js";
import { PageState } from "./PageState.js";
import type { PageLedger } from "./PageLedger.js";

/**
 * Longest a slice of the scan holds the engine's thread (ms): decode's token loop and every other
 * callback wait at most this long for it (npm run bench -- audit measures what it costs a stream).
 */
export const DEFAULT_SLICE_BUDGET_MS = 1;

/** Pages between two reads of the clock: a page costs about a microsecond, a clock read a few dozen ns. */
const PAGES_PER_CLOCK_READ = 8;

export interface ByteScanOptions {
    /** I6: every free page's bytes are zero (default true). */
    readonly scanFreePages?: boolean;
    /** The pool's share of I7: every sealed page still hashes to its seal (default true). */
    readonly verifySealedPages?: boolean;
    /** Longest one slice runs before it yields to the event loop, ms (default `DEFAULT_SLICE_BUDGET_MS`). */
    readonly sliceBudgetMs?: number;
    /** At most this many pages per slice (tests use it to interleave changes with the scan). */
    readonly maxPagesPerSlice?: number;
}

export interface ByteScanResult {
    readonly ok: boolean;
    /** The first `MAX_REPORTED_VIOLATIONS`, in page order. */
    readonly violations: readonly AuditViolation[];
    readonly numViolations: number;
    readonly numFreePagesScanned: number;
    readonly numSealedPagesVerified: number;
    /**
     * Pages free or sealed when the scan started whose state or generation had changed when their
     * slice came: skipped, not judged (their bytes belong to a moment the scan did not see whole).
     */
    readonly numPagesChangedDuringScan: number;
    readonly numSlices: number;
    /** Time the slices held the thread, the yields between them excluded (ms). */
    readonly busyMs: number;
    readonly longestSliceMs: number;
    /** From start to end, yields included (ms). */
    readonly wallMs: number;
    /** The pool was disposed before the scan reached its last page; what was scanned is reported. */
    readonly aborted: boolean;
}

/** What the scan reads of a pool; `PagePool.scanBytes()` builds it. */
export interface ByteScanView {
    readonly ledger: PageLedger;
    readonly arena: PageArena;
    readonly pageBytes: number;
    isDisposed(): boolean;
}

/**
 * The audit's byte scans (I6, and the pool's share of I7) time-sliced on the engine's thread: a
 * slice scans pages until `sliceBudgetMs` has passed, then yields with `setImmediate`, so a scan of
 * a pool of gigabytes never holds a stream's next token for longer than one slice.
 *
 * Each slice runs to completion (the pool is single-threaded), so a page's state and its bytes are
 * read in the same synchronous step and agree. A page whose state or generation changed between
 * the scan's start and its slice is counted in `numPagesChangedDuringScan` and skipped: a page
 * freed, reserved and written since is never mistaken for a dirty free page.
 */
export async function scanPoolBytes(view: ByteScanView, options: ByteScanOptions = {}): Promise<ByteScanResult> {
    const startedAt = performance.now();
    const { ledger, arena, pageBytes } = view;
    const scanFree = options.scanFreePages ?? true;
    const verifySealed = options.verifySealedPages ?? true;
    const budgetMs = options.sliceBudgetMs ?? DEFAULT_SLICE_BUDGET_MS;
    const maxPagesPerSlice = options.maxPagesPerSlice ?? ledger.numPages;
    // Which pages to judge, and at what generation: taken in one step at the start.
    const startStates = ledger.states.slice();
    const startGenerations = ledger.generations.slice();

    const violations: AuditViolation[] = [];
    let numViolations = 0;
    const report = (invariant: "I6" | "I7", page: number, message: string): void => {
        numViolations++;
        if (violations.length < MAX_REPORTED_VIOLATIONS) {
            violations.push({ invariant, pageId: toPageId(page), message });
        }
    };
    let numFreePagesScanned = 0;
    let numSealedPagesVerified = 0;
    let numPagesChangedDuringScan = 0;
    let numSlices = 0;
    let busyMs = 0;
    let longestSliceMs = 0;
    let aborted = false;

    let page = 0;
    while (page < ledger.numPages) {
        // each slice advances at least one page: at most numPages slices
        if (view.isDisposed()) {
            aborted = true;
            break;
        }
        const sliceStartedAt = performance.now();
        const sliceEnd = Math.min(ledger.numPages, page + Math.max(1, maxPagesPerSlice));
        for (let numInSlice = 1; page < sliceEnd; page++, numInSlice++) {
            const wasState = startStates[page];
            const judgeFree = scanFree && wasState === PageState.Free;
            const judgeSealed = verifySealed && wasState === PageState.Sealed;
            if (judgeFree || judgeSealed) {
                if (ledger.states[page] !== wasState || ledger.generations[page] !== startGenerations[page]) {
                    numPagesChangedDuringScan++;
                } else if (judgeFree) {
                    numFreePagesScanned++;
                    if (!arena.isZero(page)) {
                        report(
                            "I6",
                            page,
                            `free page ${page} (arena bytes [${page * pageBytes}, ${(page + 1) * pageBytes})) is not all zero`
                        );
                    }
                } else {
                    numSealedPagesVerified++;
                    const actual = arena.checksum(page, ledger.numValidBytes[page] as number, ledger.tokenStarts[page] as number);
                    if (actual !== ledger.checksums[page]) {
                        report("I7", page, `sealed page ${page} hashes to ${actual}, sealed as ${ledger.checksums[page]}`);
                    }
                }
            }
            if (numInSlice % PAGES_PER_CLOCK_READ === 0 && performance.now() - sliceStartedAt >= budgetMs) {
                page++;
                break;
            }
        }
        const sliceMs = performance.now() - sliceStartedAt;
        numSlices++;
        busyMs += sliceMs;
        longestSliceMs = Math.max(longestSliceMs, sliceMs);
        if (page < ledger.numPages) {
            await new Promise<void>((resolve) => setImmediate(resolve));
        }
    }

    return {
        ok: numViolations === 0,
        violations,
        numViolations,
        numFreePagesScanned,
        numSealedPagesVerified,
        numPagesChangedDuringScan,
        numSlices,
        busyMs,
        longestSliceMs,
        wallMs: performance.now() - startedAt,
        aborted
    };
}
