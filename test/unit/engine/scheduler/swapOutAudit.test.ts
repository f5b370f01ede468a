import { describe, expect, it } from "vitest";
import { auditEngine } from "../../../../engine/audit/auditEngine.js";
import { runTurn, schedulingStack, ws, type SchedulingStack } from "./schedulerFixtures.js";

// A swap-out's write gives the event loop back between layers and pages (PageTransfer), so the
// engine's audit can come while the swap owns pages that no swapped workspace lists yet.

function audit(stack: SchedulingStack, swapOutsInFlight = stack.workspaces.swapOutsInFlight()) {
    return auditEngine({
        pool: stack.pool,
        workspaces: stack.workspaces.all(),
        liveRequests: new Map(),
        swapOutsInFlight,
        numDecodeSequences: 1
    });
}

describe("an audit during a swap-out", () => {
    it("counts the pages a swap-out is writing as its own, and no longer once the workspace is swapped", async () => {
        const stack = schedulingStack({ numSequences: 1, sliceBudgetMs: 0 });
        await runTurn(stack, ws("a"), 8);
        const second = runTurn(stack, ws("b"), 8); // one decode sequence: a is swapped out into 2 pages
        let inFlight = stack.workspaces.swapOutsInFlight();
        for (let turn = 0; turn < 50 && inFlight.size === 0; turn++) {
            await new Promise<void>((resolve) => setImmediate(resolve));
            inFlight = stack.workspaces.swapOutsInFlight();
        }
        expect([...inFlight.keys()]).toEqual(["swap-a-1"]);
        expect(stack.workspaces.get(ws("a")).residency.kind).toBe("none"); // not swapped until the write is sealed
        expect(audit(stack).violations).toEqual([]);
        expect(audit(stack, new Map()).violations.map((violation) => violation.message)).toContainEqual(
            expect.stringMatching(/owned by swap-a-1, which is neither running, nor swapping out, nor a swapped workspace/)
        );

        await second;
        expect(stack.workspaces.swapOutsInFlight().size).toBe(0);
        expect(stack.workspaces.get(ws("a")).residency.kind).toBe("swapped");
        expect(audit(stack).violations).toEqual([]);
    });
});
