import { describe, expect, it } from "vitest";
import { TimeSlices } from "../../../engine/core/TimeSlices.js";

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("TimeSlices", () => {
    it("keeps the thread while its slice has time left, and gives one turn of the event loop back once it is spent", async () => {
        const order: string[] = [];
        const roomy = new TimeSlices(60_000);
        setImmediate(() => order.push("a turn"));
        await roomy.pause();
        order.push("roomy paused");
        expect(roomy.numPauses).toBe(0);
        await nextTurn();

        const spent = new TimeSlices(0);
        setImmediate(() => order.push("another turn"));
        await spent.pause();
        order.push("spent paused");
        expect(spent.numPauses).toBe(1);
        expect(order).toEqual(["roomy paused", "a turn", "another turn", "spent paused"]);
    });

    it("refuses a budget that is not a time", () => {
        expect(() => new TimeSlices(-1)).toThrow(/a time slice of -1 ms/);
        expect(() => new TimeSlices(Number.NaN)).toThrow(/a time slice of NaN ms/);
    });
});
