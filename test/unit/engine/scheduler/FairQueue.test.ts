import { describe, expect, it } from "vitest";
import { workspaceId } from "../../../../engine/core/ids.js";
import { FairQueue, type QueueEntry } from "../../../../engine/scheduler/FairQueue.js";

const entry = (workspace: string, arrival: number): QueueEntry => ({ workspace: workspaceId(workspace), arrival });

describe("FairQueue", () => {
    it("serves workspaces round robin: a workspace with many waiting turns does not starve the others", () => {
        const queue = new FairQueue<QueueEntry>();
        const entries = [entry("a", 0), entry("a", 1), entry("a", 2), entry("b", 3), entry("c", 4)];
        entries.forEach((item) => queue.push(item));
        const served: string[] = [];
        for (let i = 0; i < entries.length; i++) {
            served.push(queue.next(new Set())!.workspace);
        }
        expect(served).toEqual(["a", "b", "c", "a", "a"]);
        expect(queue.length).toBe(0);
    });

    it("skips a workspace that is running a turn, and reports places in grant order", () => {
        const queue = new FairQueue<QueueEntry>();
        const a = entry("a", 0);
        const b = entry("b", 1);
        queue.push(a);
        queue.push(b);
        const busy = new Set([workspaceId("a")]);
        expect(queue.positionOf(b, busy)).toBe(1);
        expect(queue.positionOf(a, busy)).toBe(2);
        expect(queue.next(busy)).toBe(b);
        expect(queue.next(busy)).toBeUndefined();
        expect(queue.next(new Set())).toBe(a);
    });

    it("removes a cancelled entry", () => {
        const queue = new FairQueue<QueueEntry>();
        const a = entry("a", 0);
        queue.push(a);
        expect(queue.remove(a)).toBe(true);
        expect(queue.remove(a)).toBe(false);
        expect(queue.next(new Set())).toBeUndefined();
    });
});
