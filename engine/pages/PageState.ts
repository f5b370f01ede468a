/**
 * Where a page is in its lifecycle (docs/ARCHITECTURE.md, Page lifecycle):
 * `free (zeroed) → reserved → written → sealed → released → quarantined → scrubbed → free`.
 *
 * "Released" and "scrubbed" are transitions, not resting states: a release moves a page to
 * `Quarantined`, and the moment its last lease drains it is zeroed and becomes `Free` again.
 * A page whose owner released it while nobody held a lease passes through quarantine in the same call.
 *
 * The values are small integers so that a snapshot of 65,536 pages is one `Uint8Array`.
 */
export const PageState = {
    /** Zeroed, on the free list, no owner. */
    Free: 0,
    /** Taken by a request at a generation; nothing written yet. */
    Reserved: 1,
    /** At least one byte written by its owner; still accepts writes. */
    Written: 2,
    /** Checksum recorded; read-only from now on. */
    Sealed: 3,
    /** Released by its owner; keeps its bytes until every lease drains, then is scrubbed. */
    Quarantined: 4
} as const;

export type PageState = (typeof PageState)[keyof typeof PageState];

export const NUM_PAGE_STATES = 5;

const PAGE_STATE_NAMES: readonly string[] = ["free", "reserved", "written", "sealed", "quarantined"];

/** Lower-case name for messages and the UI; `"invalid(n)"` for a value outside the enum. */
export function pageStateName(state: number): string {
    return PAGE_STATE_NAMES[state] ?? `invalid(${state})`;
}

/** Pages an owner can still use: reserved, written or sealed (not yet released). */
export function isLiveState(state: number): boolean {
    return state === PageState.Reserved || state === PageState.Written || state === PageState.Sealed;
}
