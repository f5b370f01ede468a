import { describe, expect, it } from "vitest";
import { requestId, workspaceId } from "../../../../engine/core/ids.js";
import type { Reservation } from "../../../../engine/pages/Reservation.js";
import type { SequenceSlot } from "../../../../engine/runtime/SequenceSlot.js";
import { planEviction, planPageGrants, planRoom, planTurnGrants, reclaimableSwaps } from "../../../../engine/scheduler/schedulingPlans.js";
import { WorkspaceRecord } from "../../../../engine/workspace/WorkspaceRecord.js";

// The scheduler's decisions, as the pure functions they are: what they return for what they see.

const turn = (workspace: string, arrival: number) => ({ workspace: workspaceId(workspace), arrival });

function swapped(name: string, numPages: number, lastUsed: number, busy = false): WorkspaceRecord {
    const record = new WorkspaceRecord(workspaceId(name));
    const reservation = { pages: Array.from({ length: numPages }, () => ({})) } as unknown as Reservation;
    record.residency = { kind: "swapped", reservation, manifest: { tokens: [] } as never };
    record.lastUsed = lastUsed;
    record.busy = busy;
    return record;
}

function resident(name: string, lastUsed: number, busy = false): WorkspaceRecord {
    const record = new WorkspaceRecord(workspaceId(name));
    record.residency = { kind: "resident", slot: { index: 0 } as SequenceSlot };
    record.lastUsed = lastUsed;
    record.busy = busy;
    return record;
}

describe("planTurnGrants", () => {
    it("grants at most the free sequences, in the queue's order, never a busy workspace nor two turns of one", () => {
        const order = [turn("a", 0), turn("a", 1), turn("b", 2), turn("c", 3), turn("d", 4)];
        expect(planTurnGrants(order, new Set([workspaceId("b")]), 2)).toEqual([turn("a", 0), turn("c", 3)]);
        expect(planTurnGrants(order, new Set(), 10)).toEqual([turn("a", 0), turn("b", 2), turn("c", 3), turn("d", 4)]);
        expect(planTurnGrants(order, new Set(), 0)).toEqual([]);
    });
});

describe("planRoom and reclaimableSwaps", () => {
    const workspaces = [swapped("new", 3, 5), resident("r", 1), swapped("old", 2, 1), swapped("busy", 9, 0, true)];

    it("offers the idle swapped workspaces, least recently used first", () => {
        expect(reclaimableSwaps(workspaces).map((entry) => [entry.workspace.id, entry.numPages])).toEqual([
            ["old", 2],
            ["new", 3]
        ]);
    });

    it("drops nothing when the free pages suffice, the least recently used first when not, and none when even all would not do", () => {
        const reclaimable = reclaimableSwaps(workspaces);
        expect(planRoom(4, 4, reclaimable)).toEqual([]);
        expect(planRoom(5, 4, reclaimable)?.map((entry) => entry.workspace.id)).toEqual(["old"]);
        expect(planRoom(9, 4, reclaimable)?.map((entry) => entry.workspace.id)).toEqual(["old", "new"]);
        expect(planRoom(10, 4, reclaimable)).toBeUndefined();
    });
});

describe("planPageGrants", () => {
    it("meets waits first come first served, counting what each takes and what the drops give, and stops at the first it cannot meet", () => {
        const reclaimable = reclaimableSwaps([swapped("old", 2, 1), swapped("new", 3, 5)]);
        const waits = [
            { request: requestId("r1"), numPages: 3 },
            { request: requestId("r2"), numPages: 3 },
            { request: requestId("r3"), numPages: 6 },
            { request: requestId("r4"), numPages: 1 }
        ];
        const plan = planPageGrants(waits, 4, reclaimable);
        // r1 takes 3 of the 4 free; r2 needs old's 2 as well; r3's 6 exceed the 0 left and new's 3, so it
        // waits, and r4, which new's pages would serve, waits behind it: nothing of new is dropped.
        expect(plan.grants.map((wait) => wait.request)).toEqual(["r1", "r2"]);
        expect(plan.drops.map((entry) => entry.workspace.id)).toEqual(["old"]);
        expect(planPageGrants([{ numPages: 8 }, { numPages: 1 }], 4, []).grants).toEqual([]);
    });
});

describe("planEviction", () => {
    it("picks the least recently used resident workspace that runs no turn, or none", () => {
        const workspaces = [resident("busy-old", 0, true), resident("b", 3), resident("a", 2), swapped("s", 1, 1)];
        expect(planEviction(workspaces)?.id).toBe("a");
        expect(planEviction([resident("busy", 0, true), swapped("s", 1, 1)])).toBeUndefined();
    });
});
