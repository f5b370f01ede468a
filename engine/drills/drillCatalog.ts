import type { DrillDescription } from "../../contract/isolation.js";

/** The fault drills, one per failure of the incident's class (shared/reference/failure-modes.md). */
export const drillCatalog = [
    {
        id: "foreign-manifest",
        title: "Decode is handed another workspace's pages (a stale or foreign manifest)",
        failureModes: [1, 6],
        guard: "manifest ownership: request, session and generation of every page, page count, positions"
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
    }
] as const satisfies readonly DrillDescription[];

export type DrillId = (typeof drillCatalog)[number]["id"];

export function isDrillId(id: string): id is DrillId {
    return drillCatalog.some((drill) => drill.id === id);
}
