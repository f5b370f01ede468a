import type { DrillDescription } from "../../contract/isolation.js";

/** The fault drills, one per failure of the incident's class (shared/reference/failure-modes.md). */
export const drillCatalog = [
    {
        id: "foreign-manifest",
        title: "Decode is handed another workspace's pages (a stale or foreign manifest)",
        failureModes: [1, 6],
        guard: "manifest ownership: request, workspace and generation of every page, page count, positions"
    },
    {
        id: "flipped-byte",
        title: "A byte of a sealed page changes in transit",
        failureModes: [13],
        guard: "per-page checksums recomputed before decode loads"
    },
    {
        id: "skipped-scrub",
        title: "Released pages go back to the free list without being zeroed",
        failureModes: [5],
        guard: "scrub before free (I6): a page is zeroed before anyone can reserve it"
    },
    {
        id: "late-write",
        title: "A cancelled transfer's write lands after its pages were given to another request",
        failureModes: [3, 4, 7],
        guard: "quarantine while leases drain, and generation-tagged leases that refuse stale writes"
    },
    {
        id: "undersized-prefill-pool",
        title: "A request longer than the prefill holds, on an engine like the 2026 incident's (stub handoff, no page count check, freed pages not zeroed)",
        failureModes: [1, 2],
        guard: "admission at the door against the smallest of the window and the measured prefill, decode and pool capacities"
    },
    {
        id: "dropped-pages",
        title: "Pages are dropped from a transfer, on a pool that does not zero freed pages",
        failureModes: [1, 14],
        guard: "the manifest's page count: ⌈tokens / pageTokens⌉ pages, or nothing is decoded"
    },
    {
        id: "replayed-completion",
        title: "A late completion of an earlier transfer arrives after its page was reused (ABA)",
        failureModes: [7],
        guard: "generation tags on completions and pages: a completion not tagged with the reader's own generation is ignored and counted"
    }
] as const satisfies readonly DrillDescription[];

export type DrillId = (typeof drillCatalog)[number]["id"];

export function isDrillId(id: string): id is DrillId {
    return drillCatalog.some((drill) => drill.id === id);
}
