import { pageStateNames, type PageStateName, type SequenceUsage } from "../../contract/EngineSnapshot.js";
import { pageDetails, type DecodedSnapshot } from "./decodeSnapshot.js";

/** What a block shows: KV in a context's sequence (`held`), room a sequence has not used (`empty`), or a host page's state. */
export type BlockKind = "held" | "empty" | PageStateName;

/** One block of the map: a page-sized run of a sequence's positions, or one host page. */
export interface Block {
    readonly kind: BlockKind;
    /** The workspace whose KV it is; undefined for free pages and unused room. */
    readonly owner: string | undefined;
    /** Of a sequence's block, how much of its page size its positions fill, (0, 1]; 1 for a host page. */
    readonly fill: number;
}

/** A part of the map: one prefill sequence (one per decode sequence by default), one decode sequence, or the host page pool. */
export interface KvSection {
    readonly key: string;
    readonly title: string;
    readonly kind: "prefill" | "decode" | "pages";
    readonly numBlocks: number;
    /** The sequence drawn, for prefill and decode sections. */
    readonly sequence?: SequenceUsage;
}

/** The map's sections, in the order a turn's KV travels: prefill, then host pages, then each decode sequence. */
export function kvSections(snapshot: DecodedSnapshot): KvSection[] {
    const { pageTokens, numPages } = snapshot.pageMap;
    const numPrefill = snapshot.sequences.filter((sequence) => sequence.role === "prefill").length;
    const ofSequence = (sequence: SequenceUsage): KvSection => {
        const isPrefill = sequence.role === "prefill";
        const prefillTitle = numPrefill === 1 ? "Prefill" : `Prefill sequence ${sequence.index + 1}`;
        return {
            key: `${sequence.role}-${sequence.index}`,
            title: isPrefill ? prefillTitle : `Decode sequence ${sequence.index + 1}`,
            kind: isPrefill ? "prefill" : "decode",
            numBlocks: Math.ceil(sequence.capacity / pageTokens),
            sequence
        };
    };
    const prefill = snapshot.sequences.filter((sequence) => sequence.role === "prefill").map(ofSequence);
    const decode = snapshot.sequences.filter((sequence) => sequence.role !== "prefill").map(ofSequence);
    return [...prefill, { key: "pages", title: "Host pages", kind: "pages", numBlocks: numPages }, ...decode];
}

/** Block `index` of `section`. */
export function blockOf(snapshot: DecodedSnapshot, section: KvSection, index: number): Block {
    const { pageMap } = snapshot;
    if (section.sequence === undefined) {
        const slot = pageMap.ownerSlots[index] ?? 0;
        return { kind: pageStateNames[pageMap.states[index] ?? 0]!, owner: slot === 0 ? undefined : pageMap.owners[slot - 1], fill: 1 };
    }
    const { pageTokens } = pageMap;
    const held = section.sequence.numTokens - index * pageTokens;
    if (held <= 0) {
        return { kind: "empty", owner: undefined, fill: 0 };
    }
    return { kind: "held", owner: section.sequence.workspace, fill: Math.min(pageTokens, held) / pageTokens };
}

/** Everything the words about one block need, in numbers. */
export interface BlockFacts {
    readonly block: Block;
    /** Positions `[start, end)` of the sequence, or the page's token range; absent for unused room and free pages. */
    readonly positions?: readonly [number, number];
    readonly bytes: number;
    readonly generation?: number;
    readonly checksum?: string;
    /** The host page's index, for pool blocks. */
    readonly page?: number;
}

export function blockFacts(snapshot: DecodedSnapshot, section: KvSection, index: number): BlockFacts {
    const block = blockOf(snapshot, section, index);
    const { pageTokens } = snapshot.pageMap;
    if (section.sequence === undefined) {
        const details = pageDetails(snapshot.pageMap, index);
        if (details?.tokenStart === undefined || details.numTokens === undefined) {
            return { block, bytes: 0, page: index };
        }
        return {
            block,
            page: index,
            positions: [details.tokenStart, details.tokenStart + details.numTokens],
            bytes: details.validBytes ?? 0,
            ...(details.generation === undefined ? {} : { generation: details.generation }),
            ...(details.checksum === undefined ? {} : { checksum: details.checksum })
        };
    }
    const start = index * pageTokens;
    const end = Math.min(start + pageTokens, section.sequence.numTokens);
    if (block.kind === "empty") {
        return { block, positions: [start, start + pageTokens], bytes: 0 };
    }
    return { block, positions: [start, end], bytes: Math.round((end - start) * snapshot.bytesPerToken) };
}
