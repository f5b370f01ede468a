import type { HandoffProgress } from "../../contract/EngineSnapshot.js";
import { formatCount } from "../util/formatCount.js";
import type { BlockFacts, KvSection } from "./kvSections.js";

/** What each kind of block means, in words a first-time user reads on hover. */
export const blockKindWords = {
    held: "KV in the context",
    empty: "room not used yet",
    free: "free: zeroed, on the free list",
    reserved: "reserved for a transfer, not yet written",
    written: "being written",
    sealed: "sealed: checksummed, waiting to be read (a handoff in flight, or a workspace swapped out)",
    quarantined: "released, zeroed once its last reader lets go"
} as const;

/**
 * One block in words: where it is, whose KV, which positions, how many bytes, its state, and for
 * a host page its generation and checksum. `ownerName` names a workspace id for people.
 */
export function describeBlock(
    section: KvSection,
    index: number,
    facts: BlockFacts,
    ownerName: (owner: string) => string,
    handoff: HandoffProgress | undefined
): string {
    const where = section.kind === "pages" ? `Host page ${formatCount(index)}` : `${section.title}, block ${formatCount(index + 1)}`;
    const parts = [where];
    const { block } = facts;
    parts.push(block.owner === undefined ? "no owner" : `owner ${ownerName(block.owner)}`);
    if (facts.positions !== undefined) {
        const [start, end] = facts.positions;
        parts.push(end > start ? `positions ${formatCount(start)}–${formatCount(end - 1)}` : "no positions");
    }
    parts.push(formatBytes(facts.bytes));
    if (section.kind !== "pages" && block.kind === "held") {
        const running = section.sequence?.running === true;
        parts.push(
            section.kind === "prefill"
                ? `being prefilled${handoff === undefined ? "" : ` (${handoff.step})`}`
                : running
                  ? "in use by a running turn"
                  : "kept between turns"
        );
    } else {
        parts.push(blockKindWords[block.kind]);
    }
    if (facts.generation !== undefined) {
        parts.push(`generation ${formatCount(facts.generation)}`);
    }
    if (facts.checksum !== undefined) {
        parts.push(`checksum ${facts.checksum}`);
    }
    return `${parts.join(", ")}.`;
}

export function formatBytes(bytes: number): string {
    return bytes >= 1024 * 1024
        ? `${formatCount(Math.round((bytes / 1024 / 1024) * 10) / 10)} MiB`
        : bytes >= 1024
          ? `${formatCount(Math.round((bytes / 1024) * 10) / 10)} KiB`
          : `${formatCount(bytes)} B`;
}
