import type { PageHolder } from "../core/ids.js";
import type { AuditInvariant, AuditOptions, AuditResult } from "./AuditResult.js";
import type { PageArena } from "./PageArena.js";
import { ScanTally, scanPoolBytesNow } from "./scanPoolBytes.js";
import { NUM_PAGE_STATES, PageState, isLiveState, pageStateName } from "./PageState.js";
import type { PageOwner, PageLedger } from "./PageLedger.js";

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

/**
 * Checks I1–I6 (and optionally the pool's share of I7) over the whole pool: O(numPages) over the
 * metadata, plus the optional byte scans. Reports every violation with its numbers; never throws.
 */
export function auditPagePool(view: PagePoolAuditView, options: AuditOptions = {}): AuditResult {
    const startedAt = performance.now();
    const { ledger, pageBytes, pageTokens } = view;
    const tally = new ScanTally();
    const report = (invariantName: AuditInvariant, page: number | undefined, message: string): void =>
        tally.log.report(invariantName, page, message);

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
        if (ledger.zeroing[page] === 1 && (state !== PageState.Quarantined || numReadLeases + writeLeased > 0)) {
            report("I3", page, `page ${page} is being zeroed while ${name} with ${numReadLeases + writeLeased} leases`);
        }
        if (state === PageState.Quarantined && numReadLeases + writeLeased === 0 && ledger.zeroing[page] === 0) {
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

    // I6 and the pool's share of I7, when asked: the byte-scan routine of the sliced audit, in one step.
    scanPoolBytesNow({ ledger, arena: view.arena, pageBytes, isDisposed: () => false }, options, tally);
    return {
        ok: tally.log.numViolations === 0,
        violations: tally.log.violations,
        numViolations: tally.log.numViolations,
        numPagesChecked: ledger.numPages,
        numFreePagesScanned: tally.numFreePagesScanned,
        numSealedPagesVerified: tally.numSealedPagesVerified,
        numPagesChangedDuringScan: 0,
        durationMs: performance.now() - startedAt
    };
}
