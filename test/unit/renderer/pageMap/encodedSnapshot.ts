import type { EngineSnapshot } from "../../../../contract/EngineSnapshot.js";

/** A snapshot as the engine sends it: states as bytes, owner slots as little-endian uint16, both base64. */
export function encodedSnapshot(states: readonly number[], slots: readonly number[], owners: readonly string[]): EngineSnapshot {
    const slotBytes = new Uint8Array(slots.length * 2);
    slots.forEach((slot, page) => {
        slotBytes[2 * page] = slot & 0xff;
        slotBytes[2 * page + 1] = slot >> 8;
    });
    const base64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));
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
            numActiveLeases: 0
        },
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
            reusedPromptTokens: 0
        },
        tokensPerSecond: 0
    };
}
