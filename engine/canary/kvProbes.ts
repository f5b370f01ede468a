import type { CanaryProbeResult } from "../../contract/isolation.js";
import type { ParsedSequenceState } from "../codec/parseSequenceState.js";
import type { PageId } from "../core/ids.js";
import { stateFingerprints, type KvFingerprint } from "./kvFingerprints.js";

/** A's KV, by fingerprint: the positions it stands for, where it was seen. */
export type SecretRows = ReadonlyMap<KvFingerprint, number>;

/** A page one of B's requests received, as it was when the reader got it: each token slot's fingerprint. */
export interface ReceivedPage {
    readonly page: PageId;
    readonly request: string;
    readonly checksum: bigint;
    readonly slots: readonly (KvFingerprint | undefined)[];
    /** The handoff's integrity error that refused the manifest before a byte was assembled, if one did. */
    readonly refusedWith?: string;
}

/**
 * A's rows that only A's KV can hold: positions from `numSharedPrefix` on. Below it B's prompts
 * have the same tokens (the chat template's opening) and so, rightly, the same rows.
 */
export function secretRowsOf(
    positions: Iterable<readonly [position: number, fingerprint: KvFingerprint | undefined]>,
    numSharedPrefix: number
): Map<KvFingerprint, number> {
    const rows = new Map<KvFingerprint, number>();
    for (const [position, fingerprint] of positions) {
        if (fingerprint !== undefined && position >= numSharedPrefix) {
            rows.set(fingerprint, position);
        }
    }
    return rows;
}

/** How many leading tokens two sequences share. */
export function sharedPrefixLength(a: readonly number[], b: readonly number[]): number {
    let length = 0;
    while (length < a.length && length < b.length && a[length] === b[length]) {
        length++;
    }
    return length;
}

/**
 * kv-pages: no page B's requests received holds a row of A's KV, in its written slots or past
 * them, and none is sealed with the checksum of a page A sealed. Model-independent: it does not
 * ask the model to recall anything.
 */
export function probeReceivedPages(
    received: readonly ReceivedPage[],
    secret: SecretRows,
    sealedByA: ReadonlySet<bigint>,
    split: boolean
): CanaryProbeResult {
    const title = "B's pages hold none of A's KV";
    if (!split) {
        return {
            id: "kv-pages",
            title,
            outcome: "skipped",
            evidence: "Unified mode hands nothing off through pages; the decode-sequence probe checks B's KV.",
            numbers: {}
        };
    }
    let numSlots = 0;
    let numWrittenSlots = 0;
    const matches: { page: PageId; request: string; slot: number; position: number }[] = [];
    let numChecksumMatches = 0;
    // Matches in pages a guard refused before decode assembled a byte of them: caught, not leaked.
    let numCaught = 0;
    for (const page of received) {
        const caught = page.refusedWith !== undefined;
        if (sealedByA.has(page.checksum)) {
            if (caught) {
                numCaught++;
            } else {
                numChecksumMatches++;
            }
        }
        page.slots.forEach((fingerprint, slot) => {
            numSlots++;
            if (fingerprint === undefined) {
                return;
            }
            numWrittenSlots++;
            const position = secret.get(fingerprint);
            if (position !== undefined && caught) {
                numCaught++;
            } else if (position !== undefined) {
                matches.push({ page: page.page, request: page.request, slot, position });
            }
        });
    }
    const numbers = {
        numPagesReceived: received.length,
        numSlotsCompared: numSlots,
        numNonZeroSlots: numWrittenSlots,
        numSecretRows: secret.size,
        numRowMatches: matches.length,
        numChecksumMatches,
        numMatchesRefusedByGuard: numCaught
    };
    const refusal = received.find((page) => page.refusedWith !== undefined)?.refusedWith;
    const caughtNote =
        numCaught === 0
            ? ""
            : ` ${numCaught} matches were in pages the handoff refused (${refusal}) before decode read a byte: caught, not leaked.`;
    if (received.length === 0) {
        return {
            id: "kv-pages",
            title,
            outcome: "skipped",
            evidence: "B's prompts were evaluated in place (no page was handed to B); the decode-sequence probe checks B's KV.",
            numbers
        };
    }
    if (matches.length === 0 && numChecksumMatches === 0) {
        return {
            id: "kv-pages",
            title,
            outcome: "passed",
            numbers,
            evidence:
                `B's requests received ${received.length} pages (${numSlots} token slots, ${numWrittenSlots} non-zero); none holds a row of A's ${secret.size} private positions, ` +
                `and none is sealed with the checksum of a page A sealed.${caughtNote}`
        };
    }
    const first = matches[0];
    const pages = new Set(matches.map((match) => match.page));
    return {
        id: "kv-pages",
        title,
        outcome: "failed",
        numbers,
        evidence:
            `${matches.length} token slots in ${pages.size} of B's ${received.length} received pages hold A's KV rows` +
            (first === undefined
                ? ""
                : ` (page ${first.page}, received by ${first.request}, slot ${first.slot} = A's position ${first.position})`) +
            `; ${numChecksumMatches} received pages carry the checksum of a page A sealed.${caughtNote}`
    };
}

/** kv-sequence: B's decode sequence, exported after each of its turns, holds no row of A's KV. */
export function probeSequenceStates(
    states: readonly (ParsedSequenceState | undefined)[],
    secret: SecretRows,
    unavailable: string | undefined
): CanaryProbeResult {
    const title = "B's decode sequence holds none of A's KV";
    if (unavailable !== undefined) {
        return { id: "kv-sequence", title, outcome: "skipped", evidence: unavailable, numbers: {} };
    }
    let numPositions = 0;
    const matches: { state: number; position: number; positionOfA: number }[] = [];
    states.forEach((state, index) => {
        if (state === undefined) {
            return;
        }
        stateFingerprints(state).forEach((fingerprint, position) => {
            numPositions++;
            const positionOfA = fingerprint === undefined ? undefined : secret.get(fingerprint);
            if (positionOfA !== undefined) {
                matches.push({ state: index, position, positionOfA });
            }
        });
    });
    const numStates = states.filter((state) => state !== undefined).length;
    const numbers = {
        numExports: numStates,
        numPositionsCompared: numPositions,
        numSecretRows: secret.size,
        numRowMatches: matches.length
    };
    if (numStates === 0) {
        return { id: "kv-sequence", title, outcome: "skipped", evidence: "B held no KV to export after its turns.", numbers };
    }
    if (matches.length === 0) {
        return {
            id: "kv-sequence",
            title,
            outcome: "passed",
            numbers,
            evidence: `B's decode sequence, exported after each of its ${numStates} turns (${numPositions} positions), holds none of A's ${secret.size} private KV rows.`
        };
    }
    const first = matches[0]!;
    return {
        id: "kv-sequence",
        title,
        outcome: "failed",
        numbers,
        evidence: `B's decode sequence holds ${matches.length} of A's KV rows (after turn ${first.state + 1}, B's position ${first.position} = A's position ${first.positionOfA}).`
    };
}
