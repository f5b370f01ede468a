import type { PageArena } from "./PageArena.js";
import { ViolationLog, type AuditOptions, type AuditResult } from "./AuditResult.js";
import { PageState } from "./PageState.js";
import type { PageLedger } from "./PageLedger.js";

/**
 * Longest a slice of the scan holds the engine's thread (ms): decode's token loop and every other
 * callback wait at most this long for it (npm run bench -- audit measures what it costs a stream).
 */
export const DEFAULT_SLICE_BUDGET_MS = 1;

/**
 * Bytes scanned between two reads of the clock: a clock read costs a few dozen ns, a page's scan
 * grows with its bytes. Counted in pages, a pool of a real model's pages (256 tokens, megabytes
 * each) read the clock only every several megabytes, so one slice held a stream's next token for
 * many times its budget (docs/measurements.md).
 */
const BYTES_PER_CLOCK_READ = 256 * 1024;

/** Pages between two reads of the clock for pages of `pageBytes`: at least one, so a page larger than that reads it after each page. */
export function pagesPerClockRead(pageBytes: number): number {
    return Math.max(1, Math.floor(BYTES_PER_CLOCK_READ / Math.max(1, pageBytes)));
}

export interface ByteScanOptions extends AuditOptions {
    /** Longest one slice runs before it yields to the event loop, ms (default `DEFAULT_SLICE_BUDGET_MS`). */
    readonly sliceBudgetMs?: number;
    /** At most this many pages per slice (tests use it to interleave changes with the scan). */
    readonly maxPagesPerSlice?: number;
}

/** The byte scans' audit result (I6, I7 only: `numPagesChecked` counts the pages the scan looked at), and how its slices ran. */
export interface ByteScanResult extends AuditResult {
    readonly numSlices: number;
    /** Time the slices held the thread, the yields between them excluded (ms). */
    readonly busyMs: number;
    readonly longestSliceMs: number;
    /** The pool was disposed before the scan reached its last page; what was scanned is reported. */
    readonly aborted: boolean;
}

/** What the scan reads of a pool; `PagePool` builds it. */
export interface ByteScanView {
    readonly ledger: PageLedger;
    readonly arena: PageArena;
    readonly pageBytes: number;
    isDisposed(): boolean;
}

/** Tallies of one scan, shared by its slices. */
export class ScanTally {
    readonly log = new ViolationLog();
    numFreePagesScanned = 0;
    numSealedPagesVerified = 0;
    numPagesChangedDuringScan = 0;
}

/**
 * The audit's one byte-scan routine, for one page: a free page must be all zero (I6), a sealed one
 * must still hash to its seal (the pool's share of I7). `wasState` and `wasGeneration` are what the
 * scan saw when it started; a page changed since is counted and skipped, not judged.
 */
function judgePageBytes(
    view: ByteScanView,
    page: number,
    wasState: number,
    wasGeneration: number,
    options: AuditOptions,
    tally: ScanTally
): void {
    const { ledger, arena, pageBytes } = view;
    const judgeFree = options.scanFreePages === true && wasState === PageState.Free;
    const judgeSealed = options.verifySealedPages === true && wasState === PageState.Sealed;
    if (!judgeFree && !judgeSealed) {
        return;
    }
    if (ledger.states[page] !== wasState || ledger.generations[page] !== wasGeneration) {
        tally.numPagesChangedDuringScan++;
    } else if (judgeFree) {
        tally.numFreePagesScanned++;
        if (!arena.isZero(page)) {
            tally.log.report(
                "I6",
                page,
                `free page ${page} (arena bytes [${page * pageBytes}, ${(page + 1) * pageBytes})) is not all zero`
            );
        }
    } else {
        tally.numSealedPagesVerified++;
        const actual = arena.checksum(page, ledger.numValidBytes[page] as number, ledger.tokenStarts[page] as number);
        if (actual !== ledger.checksums[page]) {
            tally.log.report("I7", page, `sealed page ${page} hashes to ${actual}, sealed as ${ledger.checksums[page]}`);
        }
    }
}

/** The byte scans over every page in one synchronous step: for the pool's own audit, and pools small enough to scan at once. */
export function scanPoolBytesNow(view: ByteScanView, options: AuditOptions, tally = new ScanTally()): ScanTally {
    const { ledger } = view;
    for (let page = 0; page < ledger.numPages; page++) {
        judgePageBytes(view, page, ledger.states[page] as number, ledger.generations[page] as number, options, tally);
    }
    return tally;
}

/**
 * The audit's byte scans time-sliced on the engine's thread: a slice scans pages until
 * `sliceBudgetMs` has passed, then yields with `setImmediate`, so a scan of a pool of gigabytes
 * never holds a stream's next token for longer than one slice.
 *
 * Each slice runs to completion (the pool is single-threaded), so a page's state and its bytes are
 * read in the same synchronous step and agree. A page whose state or generation changed between
 * the scan's start and its slice is counted in `numPagesChangedDuringScan` and skipped: a page
 * freed, reserved and written since is never mistaken for a dirty free page.
 */
export async function scanPoolBytes(view: ByteScanView, options: ByteScanOptions = {}): Promise<ByteScanResult> {
    const startedAt = performance.now();
    const { ledger } = view;
    const judged: AuditOptions = { scanFreePages: options.scanFreePages ?? true, verifySealedPages: options.verifySealedPages ?? true };
    const budgetMs = options.sliceBudgetMs ?? DEFAULT_SLICE_BUDGET_MS;
    const maxPagesPerSlice = options.maxPagesPerSlice ?? ledger.numPages;
    const clockEvery = pagesPerClockRead(view.pageBytes);
    // Which pages to judge, and at what generation: taken in one step at the start.
    const startStates = ledger.states.slice();
    const startGenerations = ledger.generations.slice();
    const tally = new ScanTally();
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
            judgePageBytes(view, page, startStates[page] as number, startGenerations[page] as number, judged, tally);
            if (numInSlice % clockEvery === 0 && performance.now() - sliceStartedAt >= budgetMs) {
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
        ok: tally.log.numViolations === 0,
        violations: tally.log.violations,
        numViolations: tally.log.numViolations,
        numPagesChecked: page,
        numFreePagesScanned: tally.numFreePagesScanned,
        numSealedPagesVerified: tally.numSealedPagesVerified,
        numPagesChangedDuringScan: tally.numPagesChangedDuringScan,
        durationMs: performance.now() - startedAt,
        numSlices,
        busyMs,
        longestSliceMs,
        aborted
    };
}
