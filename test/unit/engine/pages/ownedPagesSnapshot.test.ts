// The details a snapshot carries of every page that is not free: generation, positions, bytes, checksum.
import { describe, expect, it } from "vitest";
import { alice, bob, expectNoLeaks, makePool, pattern, req, writeAndSeal } from "./pagePoolFixtures.js";

describe("the pool snapshot's owned pages", () => {
    it("details only the pages that are not free, in page order, with a sealed page's checksum", () => {
        const pool = makePool({ numPages: 5, pageTokens: 4, pageBytes: 16 });
        const ofAlice = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 2, firstToken: 8 });
        const ofBob = pool.reserve({ workspace: bob, holder: req("r2"), numPages: 1, firstToken: 0 });
        const bobPage = ofBob.pages[0]!;
        writeAndSeal(pool, bobPage, pattern(12, 0x42), 3);

        const { ownedPages } = pool.snapshot();
        expect(Array.from(ownedPages.generations)).toEqual([ofAlice.generation, ofAlice.generation, ofBob.generation]);
        expect(Array.from(ownedPages.tokenStarts)).toEqual([8, 12, 0]);
        expect(Array.from(ownedPages.tokenCounts)).toEqual([4, 4, 3]);
        expect(Array.from(ownedPages.validBytes)).toEqual([0, 0, 12]);
        expect(ownedPages.checksums[0]).toBe(0n);
        expect(ownedPages.checksums[2]).toBe(pool.pageInfo(bobPage.pageId).checksum);
        expect(ownedPages.checksums[2]).not.toBe(0n);

        pool.release(ofAlice);
        pool.release(ofBob);
        expect(pool.snapshot().ownedPages.generations).toHaveLength(0); // a free pool details nothing
        expectNoLeaks(pool);
    });
});
