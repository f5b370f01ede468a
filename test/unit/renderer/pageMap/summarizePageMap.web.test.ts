import { describe, expect, it } from "vitest";
import { decodeSnapshot } from "../../../../renderer/pageMap/decodeSnapshot.js";
import { summarizePageMap } from "../../../../renderer/pageMap/summarizePageMap.js";
import { encodedSnapshot } from "./encodedSnapshot.js";

describe("summarizePageMap", () => {
    it("counts pages by state and by owner, in slot order, unowned non-free pages last", () => {
        const { pageMap } = decodeSnapshot(encodedSnapshot([0, 3, 3, 2, 4, 1, 0], [0, 2, 2, 1, 0, 1, 0], ["ui-a", "ui-b"]));
        expect(summarizePageMap(pageMap)).toEqual({
            numPages: 7,
            byState: { free: 2, reserved: 1, written: 1, sealed: 2, quarantined: 1 },
            owners: [
                { owner: "ui-a", numPages: 2, byState: { free: 0, reserved: 1, written: 1, sealed: 0, quarantined: 0 } },
                { owner: "ui-b", numPages: 2, byState: { free: 0, reserved: 0, written: 0, sealed: 2, quarantined: 0 } },
                { owner: undefined, numPages: 1, byState: { free: 0, reserved: 0, written: 0, sealed: 0, quarantined: 1 } }
            ]
        });
    });

    it("has no owners when every page is free", () => {
        const { pageMap } = decodeSnapshot(encodedSnapshot([0, 0, 0], [0, 0, 0], []));
        expect(summarizePageMap(pageMap)).toMatchObject({ byState: { free: 3 }, owners: [] });
    });
});
