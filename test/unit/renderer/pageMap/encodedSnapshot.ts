import type { EngineSnapshot, SequenceUsage } from "../../../../contract/EngineSnapshot.js";

/** Details of an owned page, as the engine sends them. */
export interface OwnedPage {
    readonly generation: number;
    readonly tokenStart: number;
    readonly numTokens: number;
    readonly validBytes: number;
    readonly checksum: bigint;
}

/**
 * A snapshot as the engine sends it: states as bytes, owner slots as little-endian uint16, both
 * base64; `owned` details the non-free pages in page order (zeros where not given).
 */
export function encodedSnapshot(
    states: readonly number[],
    slots: readonly number[],
    owners: readonly string[],
    owned: readonly OwnedPage[] = [],
    sequences: readonly SequenceUsage[] = []
): EngineSnapshot {
    const slotBytes = new Uint8Array(slots.length * 2);
    slots.forEach((slot, page) => {
        slotBytes[2 * page] = slot & 0xff;
        slotBytes[2 * page + 1] = slot >> 8;
    });
    const base64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));
    const count = states.filter((state) => state !== 0).length;
    const details = Array.from(
        { length: count },
        (_, index) => owned[index] ?? { generation: 0, tokenStart: 0, numTokens: 0, validBytes: 0, checksum: 0n }
    );
    const array = (Type: Uint32ArrayConstructor | Uint16ArrayConstructor, pick: (page: OwnedPage) => number): string =>
        base64(new Uint8Array(Type.from(details.map(pick)).buffer));
    return {
        at: 1,
        pageMap: {
            numPages: states.length,
            pageTokens: 16,
            pageBytes: 8_192,
            states: base64(Uint8Array.from(states)),
            ownerSlots: base64(slotBytes),
            owners,
            numPagesByState: { free: 0, reserved: 0, written: 0, sealed: 0, quarantined: 0 },
            numActiveLeases: 0,
            ownedPages: {
                count,
                generations: array(Uint32Array, (page) => page.generation),
                tokenStarts: array(Uint32Array, (page) => page.tokenStart),
                tokenCounts: array(Uint16Array, (page) => page.numTokens),
                validBytes: array(Uint32Array, (page) => page.validBytes),
                checksums: base64(new Uint8Array(BigUint64Array.from(details.map((page) => page.checksum)).buffer))
            }
        },
        sequences,
        bytesPerToken: 512,
        handoffs: [],
        workspaces: [],
        roles: [],
        capacities: { window: 512, prefill: 512, decode: 512, pool: 1_536, limit: 512 },
        numQueued: 0,
        counters: {
            requests: { finished: 0, rejected: 0, cancelled: 0, failed: 0 },
            integrityFailures: 0,
            staleWritesRefused: 0,
            staleCompletionsIgnored: 0,
            pagesScrubbed: 0,
            swapOuts: 0,
            swapIns: 0,
            swapDrops: 0,
            generatedTokens: 0,
            evaluatedPromptTokens: 0,
            reusedPromptTokens: 0,
            acceptedDraftTokens: 0,
            rejectedDraftTokens: 0
        },
        tokensPerSecond: 0
    };
}
