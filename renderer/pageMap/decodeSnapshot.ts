import { pageStateNames, type EngineSnapshot, type PageMapSnapshot } from "../../contract/EngineSnapshot.js";

/** The page map with its arrays decoded: one entry per page. */
export interface DecodedPageMap extends Omit<PageMapSnapshot, "states" | "ownerSlots"> {
    /** Each page's state number, an index into `pageStateNames`. */
    readonly states: Uint8Array;
    /** Each page's owner slot: 0 for none, else `k` meaning `owners[k − 1]`. */
    readonly ownerSlots: Uint16Array;
}

export interface DecodedSnapshot extends Omit<EngineSnapshot, "pageMap"> {
    readonly pageMap: DecodedPageMap;
}

/** A snapshot whose arrays disagree with its own counts: a bug on the engine's side, never drawn. */
export class SnapshotDecodeError extends Error {
    readonly code = "bad_snapshot";
}

/** Decodes the base64 arrays of a snapshot and checks them against its counts. */
export function decodeSnapshot(snapshot: EngineSnapshot): DecodedSnapshot {
    const { pageMap } = snapshot;
    const states = decodeBase64(pageMap.states);
    const ownerBytes = decodeBase64(pageMap.ownerSlots);
    if (states.length !== pageMap.numPages || ownerBytes.length !== 2 * pageMap.numPages) {
        throw new SnapshotDecodeError(
            `The snapshot describes ${pageMap.numPages} pages but carries ${states.length} states and ${ownerBytes.length / 2} owner slots.`
        );
    }
    const ownerSlots = new Uint16Array(pageMap.numPages);
    const view = new DataView(ownerBytes.buffer, ownerBytes.byteOffset, ownerBytes.byteLength);
    for (let page = 0; page < pageMap.numPages; page++) {
        const state = states[page]!;
        const slot = view.getUint16(2 * page, true);
        if (state >= pageStateNames.length) {
            throw new SnapshotDecodeError(`Page ${page} has state ${state}; states are 0 to ${pageStateNames.length - 1}.`);
        }
        if (slot > pageMap.owners.length) {
            throw new SnapshotDecodeError(`Page ${page} has owner slot ${slot}; the snapshot names ${pageMap.owners.length} owners.`);
        }
        ownerSlots[page] = slot;
    }
    return { ...snapshot, pageMap: { ...pageMap, states, ownerSlots } };
}

/** Standard base64 (with padding) to bytes. */
export function decodeBase64(text: string): Uint8Array {
    let binary: string;
    try {
        binary = atob(text);
    } catch {
        throw new SnapshotDecodeError("The snapshot's page arrays are not valid base64.");
    }
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++) {
        bytes[index] = binary.charCodeAt(index);
    }
    return bytes;
}

/** The workspace id owning `page`, or undefined. */
export function pageOwner(pageMap: DecodedPageMap, page: number): string | undefined {
    const slot = pageMap.ownerSlots[page] ?? 0;
    return slot === 0 ? undefined : pageMap.owners[slot - 1];
}
