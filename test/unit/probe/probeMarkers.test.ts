import { describe, expect, it } from "vitest";
import { fillerText, findMarkers, makeMarker, markedDocument, PROBE_MARKER_PREFIX } from "../../../probe/probeMarkers.js";

describe("the probe's markers", () => {
    it("are the prefix and 12 characters of an alphabet without 0, O, 1 or I, new each time", () => {
        const markers = Array.from({ length: 200 }, () => makeMarker());
        for (const marker of markers) {
            expect(marker).toMatch(/^KV-PROBE-[A-HJ-NP-Z2-9]{12}$/);
        }
        expect(new Set(markers).size).toBe(200);
    });

    it("take their characters from the random bytes given, 5 bits of each", () => {
        expect(makeMarker((count) => new Uint8Array(count).fill(0))).toBe(`${PROBE_MARKER_PREFIX}AAAAAAAAAAAA`);
        expect(makeMarker((count) => new Uint8Array(count).fill(31 + 64))).toBe(`${PROBE_MARKER_PREFIX}999999999999`);
    });

    it("are found whole, or as their secret through spacing, punctuation and case, and not from a part", () => {
        const marker = "KV-PROBE-7HQ2MZ4XKA9C";
        const other = "KV-PROBE-ABCDEFGHJKLM";
        expect(findMarkers(`The code is ${marker}.`, [marker, other])).toEqual([marker]);
        expect(findMarkers("kv probe 7hq2-mz4x ka9c", [marker])).toEqual([marker]);
        expect(findMarkers("7 H Q 2 M Z 4 X K A 9 C", [marker])).toEqual([marker]);
        expect(findMarkers("7HQ2MZ4XKA9", [marker])).toEqual([]);
        expect(findMarkers("", [marker])).toEqual([]);
    });
});

describe("the filler", () => {
    it("is exactly as long as asked, and the same for the same offset", () => {
        for (const length of [0, 1, 57, 1000, 12_345]) {
            expect(fillerText(length)).toHaveLength(length);
        }
        expect(fillerText(500, 3)).toBe(fillerText(500, 3));
        expect(fillerText(500, 3)).not.toBe(fillerText(500, 4));
    });

    it("puts the start marker first and the end marker last, around the filler", () => {
        const document = markedDocument("KV-PROBE-AAAAAAAAAAAA", "KV-PROBE-BBBBBBBBBBBB", 300);
        expect(document.startsWith("The code at the start is KV-PROBE-AAAAAAAAAAAA.\n")).toBe(true);
        expect(document.endsWith("\nThe code at the end is KV-PROBE-BBBBBBBBBBBB.")).toBe(true);
        expect(findMarkers(fillerText(5000), ["KV-PROBE-AAAAAAAAAAAA"])).toEqual([]);
    });
});
