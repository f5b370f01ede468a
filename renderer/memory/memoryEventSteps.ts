import type { MemoryEventKind } from "../../contract/memoryEvents.js";

/**
 * Where the KV was at an event of each kind, in words shown above the replayed map: a handoff's
 * events read in order as prefill → sealed pages → verified decode.
 */
export const memoryEventSteps: Readonly<Record<MemoryEventKind, string>> = {
    handoffStarted: "handoff: prefill has read the prompt and hands its KV to decode through host pages",
    reserved: "pages reserved for the transfer, not yet written",
    sealed: "the prefill's KV written to its pages and sealed (checksummed)",
    verified: "the pages' checksums verified: decode reads them into its sequence",
    released: "the pages released by their owner; each is zeroed before reuse",
    scrubbed: "the pages zeroed, free again",
    integrityRefused: "a check refused the pages: nothing was read from them",
    swappedOut: "a workspace's decode sequence saved to pages, freeing the sequence",
    swappedIn: "a workspace's pages loaded back into a decode sequence",
    audited: "the whole pool audited",
    refused: "a request refused before it took any page",
    quarantined: "pages set aside after a failed check, never reused until a restart",
    loadedFromDisk: "a workspace's KV loaded from its encrypted file instead of a prefill"
};
