import { formatCount } from "../util/formatCount.js";
import { pageStateNames, type EngineSnapshot, type OwnedPageDetails, type PageMapSnapshot } from "../../contract/EngineSnapshot.js";

/** The page map with its arrays decoded: one entry per page. */
export interface DecodedPageMap extends Omit<PageMapSnapshot, "states" | "ownerSlots" | "ownedPages"> {
    /** Each page's state number, an index into `pageStateNames`. */
    readonly states: Uint8Array;
    /** Each page's owner slot: 0 for none, else `k` meaning `owners[k − 1]`. */
    readonly ownerSlots: Uint16Array;
    /** Each page's index into `owned`, or −1 for a free page. */
    readonly ownedIndex: Int32Array;
    readonly owned: DecodedOwnedPages;
}

/** The details of the pages that are not free, in page order. */
export interface DecodedOwnedPages {
    readonly generations: Uint32Array;
    readonly tokenStarts: Uint32Array;
    readonly tokenCounts: Uint16Array;
    readonly validBytes: Uint32Array;
    /** 0n where the page is not sealed. */
    readonly checksums: BigUint64Array;
}

/** One page's details, in numbers, for the page map's words. */
export interface PageDetails {
    readonly page: number;
    readonly state: (typeof pageStateNames)[number];
    readonly owner: string | undefined;
    /** Absent on a free page. */
    readonly generation?: number;
    readonly tokenStart?: number;
    readonly numTokens?: number;
    readonly validBytes?: number;
    /** 16 hex digits while sealed. */
    readonly checksum?: string;
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
    const { ownedPages, ...counts } = pageMap;
    const { ownedIndex, owned } = decodeOwnedPages(counts, ownedPages, states);
    decodeSequences(snapshot);
    return { ...snapshot, pageMap: { ...counts, states, ownerSlots, ownedIndex, owned } };
}

function decodeOwnedPages(
    pageMap: Omit<PageMapSnapshot, "ownedPages">,
    encoded: OwnedPageDetails,
    states: Uint8Array
): { ownedIndex: Int32Array; owned: DecodedOwnedPages } {
    const ownedIndex = new Int32Array(pageMap.numPages).fill(-1);
    const pages: number[] = [];
    for (let page = 0; page < pageMap.numPages; page++) {
        if (states[page] !== 0) {
            ownedIndex[page] = pages.length;
            pages.push(page);
        }
    }
    const count = pages.length;
    if (encoded.count !== count) {
        throw new SnapshotDecodeError(`The snapshot has ${count} pages that are not free but details of ${encoded.count}.`);
    }
    const field = (name: keyof Omit<OwnedPageDetails, "count">, bytesEach: number): DataView => {
        const bytes = decodeBase64(encoded[name]);
        if (bytes.length !== count * bytesEach) {
            throw new SnapshotDecodeError(
                `The snapshot's ${name} of ${count} pages take ${bytes.length} bytes; they must take ${count * bytesEach} (${bytesEach} each).`
            );
        }
        return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    };
    const views = {
        generations: field("generations", 4),
        tokenStarts: field("tokenStarts", 4),
        tokenCounts: field("tokenCounts", 2),
        validBytes: field("validBytes", 4),
        checksums: field("checksums", 8)
    };
    const owned = {
        generations: new Uint32Array(count),
        tokenStarts: new Uint32Array(count),
        tokenCounts: new Uint16Array(count),
        validBytes: new Uint32Array(count),
        checksums: new BigUint64Array(count)
    };
    for (let index = 0; index < count; index++) {
        owned.generations[index] = views.generations.getUint32(4 * index, true);
        owned.tokenStarts[index] = views.tokenStarts.getUint32(4 * index, true);
        owned.tokenCounts[index] = views.tokenCounts.getUint16(2 * index, true);
        owned.validBytes[index] = views.validBytes.getUint32(4 * index, true);
        owned.checksums[index] = views.checksums.getBigUint64(8 * index, true);
        if (owned.tokenCounts[index]! > pageMap.pageTokens || owned.validBytes[index]! > pageMap.pageBytes) {
            throw new SnapshotDecodeError(
                `Page ${pages[index]} holds ${formatCount(owned.tokenCounts[index]!)} tokens in ${formatCount(owned.validBytes[index]!)} bytes; ` +
                    `a page holds at most ${formatCount(pageMap.pageTokens)} tokens in ${formatCount(pageMap.pageBytes)} bytes.`
            );
        }
    }
    return { ownedIndex, owned };
}

/** Checks each sequence's blocks against its positions and the page size, and its positions against its capacity. */
function decodeSequences(snapshot: EngineSnapshot): void {
    const { pageTokens } = snapshot.pageMap;
    for (const sequence of snapshot.sequences) {
        const name = `${sequence.role} sequence ${sequence.index}`;
        if (!Number.isSafeInteger(sequence.numTokens) || sequence.numTokens < 0 || sequence.numTokens > sequence.capacity) {
            throw new SnapshotDecodeError(`The ${name} holds ${sequence.numTokens} positions of its ${sequence.capacity}.`);
        }
        if (sequence.numBlocks !== Math.ceil(sequence.numTokens / pageTokens)) {
            throw new SnapshotDecodeError(
                `The ${name} holds ${sequence.numTokens} positions in ${sequence.numBlocks} blocks; blocks of ${pageTokens} make ${Math.ceil(sequence.numTokens / pageTokens)}.`
            );
        }
        if (sequence.numTokens > 0 && sequence.workspace === undefined) {
            throw new SnapshotDecodeError(`The ${name} holds ${sequence.numTokens} positions but names no workspace.`);
        }
    }
}

/** A page's details from the decoded arrays; undefined outside the pool. */
export function pageDetails(pageMap: DecodedPageMap, page: number): PageDetails | undefined {
    if (!Number.isInteger(page) || page < 0 || page >= pageMap.numPages) {
        return undefined;
    }
    const state = pageStateNames[pageMap.states[page]!]!;
    const owner = pageOwner(pageMap, page);
    const index = pageMap.ownedIndex[page]!;
    if (index < 0) {
        return { page, state, owner };
    }
    const checksum = pageMap.owned.checksums[index]!;
    return {
        page,
        state,
        owner,
        generation: pageMap.owned.generations[index]!,
        tokenStart: pageMap.owned.tokenStarts[index]!,
        numTokens: pageMap.owned.tokenCounts[index]!,
        validBytes: pageMap.owned.validBytes[index]!,
        ...(state === "sealed" ? { checksum: checksum.toString(16).padStart(16, "0") } : {})
    };
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
