import { pageId as toPageId, type PageId, type PageHolder } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { PageArena } from "./PageArena.js";
import { NUM_PAGE_STATES, PageState, isLiveState, pageStateName } from "./PageState.js";
import type { PageOwner, PageLedger } from "./PageLedger.js";

export interface PagePoolAuditOptions {
    /** Check I6 by reading every free page's bytes: O(free bytes), a native memcmp of roughly 20–30 GB/s. Off by default. */
    readonly scanFreePages?: boolean;
    /** Recompute every sealed page's checksum (the pool's share of I7): O(sealed bytes). Off by default. */
    readonly verifySealedPages?: boolean;
}

export type AuditInvariant = "I1" | "I2" | "I3" | "I4" | "I5" | "I6" | "I7";

export interface AuditViolation {
    readonly invariant: AuditInvariant;
    readonly pageId?: PageId;
    readonly message: string;
}

export interface PagePoolAuditResult {
    readonly ok: boolean;
    /** The first `MAX_REPORTED_VIOLATIONS`, in page order within each check. */
    readonly violations: readonly AuditViolation[];
    readonly numViolations: number;
    readonly numPagesChecked: number;
    readonly numFreePagesScanned: number;
    readonly numSealedPagesVerified: number;
    readonly durationMs: number;
}

/** What the audit reads of a pool; `PagePool.audit()` builds it. */
export interface PagePoolAuditView {
    readonly ledger: PageLedger;
    readonly arena: PageArena;
    readonly pageTokens: number;
    readonly pageBytes: number;
    readonly reservations: ReadonlyMap<PageHolder, PageOwner>;
    /** The generation the next reservation will get; every page's generation is below it. */
    readonly nextGeneration: number;
    readonly numActiveLeases: number;
}

export const MAX_REPORTED_VIOLATIONS = 100;

/**
 * Checks I1–I6 (and optionally the pool's share of I7) over the whole pool: O(numPages) over the
 * metadata, plus the optional byte scans. Reports every violation with its numbers; never throws.
 */
export function auditPagePool(view: PagePoolAuditView, options: PagePoolAuditOptions = {}): PagePoolAuditResult {
    const startedAt = performance.now();
    const { ledger, pageBytes, pageTokens } = view;
    const violations: AuditViolation[] = [];
    let numViolations = 0;
    const report = (invariantName: AuditInvariant, page: number | undefined, message: string): void => {
        numViolations++;
        if (violations.length < MAX_REPORTED_VIOLATIONS) {
            violations.push(
                page === undefined ? { invariant: invariantName, message } : { invariant: invariantName, pageId: toPageId(page), message }
            );
        }
    };

    const numPagesCounted = new Float64Array(NUM_PAGE_STATES);
    let numLeasesCounted = 0;
    for (let page = 0; page < ledger.numPages; page++) {
        const state = ledger.states[page] as number;
        const owner = ledger.owners[page];
        const generation = ledger.generations[page] as number;
        const numReadLeases = ledger.numReadLeases[page] as number;
        const writeLeased = ledger.writeLeased[page] as number;
        const numValidBytes = ledger.numValidBytes[page] as number;
        const numTokens = (ledger.tokenEnds[page] as number) - (ledger.tokenStarts[page] as number);
        const name = pageStateName(state);
        numLeasesCounted += numReadLeases + writeLeased;

        if (state >= NUM_PAGE_STATES) {
            report("I1", page, `page ${page} has state value ${state}, outside [0, ${NUM_PAGE_STATES})`);
            continue;
        }
        numPagesCounted[state] = (numPagesCounted[state] ?? 0) + 1;
        if (generation >= view.nextGeneration) {
            report("I5", page, `page ${page} has generation ${generation}, not below the next one, ${view.nextGeneration}`);
        }
        if (writeLeased > 1) {
            report("I3", page, `page ${page} has ${writeLeased} writers`);
        }

        if (state === PageState.Free) {
            if (owner !== undefined) {
                report("I2", page, `free page ${page} is owned by ${owner.holder} at generation ${owner.generation}`);
            }
            if (numReadLeases + writeLeased > 0) {
                report("I3", page, `free page ${page} holds ${numReadLeases} read and ${writeLeased} write leases`);
            }
            if (numValidBytes !== 0 || numTokens !== 0) {
                report("I1", page, `free page ${page} still records ${numValidBytes} valid bytes and ${numTokens} tokens`);
            }
            continue;
        }

        if (owner === undefined) {
            report("I1", page, `page ${page} is ${name} with no owner`);
            continue;
        }
        if (generation !== owner.generation) {
            report("I5", page, `page ${page} is at generation ${generation}, its owner ${owner.holder} at ${owner.generation}`);
        }
        if (numValidBytes > pageBytes) {
            report("I1", page, `page ${page} records ${numValidBytes} valid bytes, more than the page's ${pageBytes}`);
        }
        if (numTokens < 1 || numTokens > pageTokens) {
            report("I1", page, `page ${page} holds ${numTokens} tokens, outside [1, ${pageTokens}]`);
        }

        if (isLiveState(state)) {
            if (owner.released || view.reservations.get(owner.holder) !== owner) {
                report(
                    "I4",
                    page,
                    `page ${page} is ${name} for ${owner.holder} at generation ${owner.generation}, which holds no live reservation`
                );
            }
        } else if (!owner.released) {
            report("I4", page, `page ${page} is quarantined but ${owner.holder} at generation ${owner.generation} never released it`);
        }

        if (state === PageState.Reserved && numValidBytes !== 0) {
            report("I1", page, `page ${page} is reserved but records ${numValidBytes} valid bytes`);
        }
        if (state === PageState.Written && numValidBytes === 0) {
            report("I1", page, `page ${page} is written but records 0 valid bytes`);
        }
        if ((state === PageState.Reserved || state === PageState.Written) && numReadLeases > 0) {
            report("I3", page, `page ${page} is ${name} (not sealed) and holds ${numReadLeases} read leases`);
        }
        if (state === PageState.Sealed && writeLeased > 0) {
            report("I3", page, `page ${page} is sealed and still has a writer`);
        }
        if (state === PageState.Quarantined && numReadLeases + writeLeased === 0) {
            report("I3", page, `page ${page} is quarantined with no lease left; it should have been scrubbed`);
        }
    }

    for (let state = 0; state < NUM_PAGE_STATES; state++) {
        if (numPagesCounted[state] !== ledger.numPagesByState[state]) {
            report(
                "I2",
                undefined,
                `${numPagesCounted[state]} pages are ${pageStateName(state)}, the pool counts ${ledger.numPagesByState[state]}`
            );
        }
    }
    if (numLeasesCounted !== view.numActiveLeases) {
        report("I3", undefined, `pages hold ${numLeasesCounted} leases, the pool counts ${view.numActiveLeases}`);
    }

    // I2: the free list holds exactly the free pages, once each.
    const seen = new Uint8Array(ledger.numPages);
    if (ledger.numFree !== numPagesCounted[PageState.Free]) {
        report("I2", undefined, `the free list holds ${ledger.numFree} pages, ${numPagesCounted[PageState.Free]} pages are free`);
    }
    for (let index = 0; index < ledger.numFree; index++) {
        const page = ledger.freeStack[index] as number;
        if (page >= ledger.numPages) {
            report("I2", undefined, `free list entry ${index} is page ${page}, outside [0, ${ledger.numPages})`);
            continue;
        }
        if (seen[page] === 1) {
            report("I2", page, `page ${page} is on the free list twice`);
        }
        if (ledger.states[page] !== PageState.Free) {
            report("I2", page, `page ${page} is on the free list but ${pageStateName(ledger.states[page] as number)}`);
        }
        seen[page] = 1;
    }

    // I1, I2, I4: live reservations own their pages exclusively, and no live page is outside one.
    seen.fill(0);
    let numReservedPages = 0;
    for (const [holder, owner] of view.reservations) {
        if (holder !== owner.holder || owner.released) {
            report("I4", undefined, `reservation under ${holder} belongs to ${owner.holder} (released: ${owner.released})`);
        }
        for (const page of owner.pages) {
            numReservedPages++;
            if (seen[page] === 1) {
                report("I2", page, `page ${page} belongs to two live reservations, one of them ${owner.holder}`);
            }
            seen[page] = 1;
            if (ledger.owners[page] !== owner) {
                report("I1", page, `${owner.holder} at generation ${owner.generation} lists page ${page}, which another owner holds`);
            }
        }
    }
    const numLivePages =
        (numPagesCounted[PageState.Reserved] ?? 0) + (numPagesCounted[PageState.Written] ?? 0) + (numPagesCounted[PageState.Sealed] ?? 0);
    if (numReservedPages !== numLivePages) {
        report("I2", undefined, `live reservations list ${numReservedPages} pages, ${numLivePages} pages are reserved, written or sealed`);
    }

    let numFreePagesScanned = 0;
    let numSealedPagesVerified = 0;
    if (options.scanFreePages === true || options.verifySealedPages === true) {
        for (let page = 0; page < ledger.numPages; page++) {
            const state = ledger.states[page];
            if (state === PageState.Free && options.scanFreePages === true) {
                numFreePagesScanned++;
                if (!view.arena.isZero(page)) {
                    report("I6", page, `free page ${page} (arena bytes [${page * pageBytes}, ${(page + 1) * pageBytes})) is not all zero`);
                }
            } else if (state === PageState.Sealed && options.verifySealedPages === true) {
                numSealedPagesVerified++;
                const actual = view.arena.checksum(page, ledger.numValidBytes[page] as number, ledger.tokenStarts[page] as number);
                if (actual !== ledger.checksums[page]) {
                    report("I7", page, `sealed page ${page} hashes to ${actual}, sealed as ${ledger.checksums[page]}`);
                }
            }
        }
    }

    return {
        ok: numViolations === 0,
        violations,
        numViolations,
        numPagesChecked: ledger.numPages,
        numFreePagesScanned,
        numSealedPagesVerified,
        durationMs: performance.now() - startedAt
    };
}

/** For tests and debug builds: throws an `InvariantError` listing the violations. */
export function assertAuditClean(result: PagePoolAuditResult): void {
    invariant(
        result.ok,
        () =>
            `page pool audit found ${result.numViolations} violations over ${result.numPagesChecked} pages:\n` +
            result.violations.map((violation) => `  ${violation.invariant}: ${violation.message}`).join("\n")
    );
}
