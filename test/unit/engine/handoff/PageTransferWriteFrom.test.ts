import { describe, expect, it } from "vitest";
import { bytesPerToken, layoutFingerprint } from "../../../../engine/codec/KvLayout.js";
import { StateLayoutMismatchError } from "../../../../engine/codec/codecErrors.js";
import type { StateTarget } from "../../../../engine/codec/statePages.js";
import { requestId, workspaceId } from "../../../../engine/core/ids.js";
import { PageTransfer } from "../../../../engine/handoff/PageTransfer.js";
import { sequenceStateSource, type StateSource } from "../../../../engine/handoff/StateSource.js";
import { PagePool } from "../../../../engine/pages/PagePool.js";
import { FAKE_LAYOUT, FakeRoleContext } from "../../../support/FakeRoleContext.js";
import { expectPoolDrained, PAGE_TOKENS } from "../scheduler/schedulerFixtures.js";

// PageTransfer.writeFrom: a sequence's state saved straight into the reservation's pages where its
// context can, checked against the plan before a byte counts, and exported whole where it cannot;
// the same sealed pages either way.

const TOKENS = Array.from({ length: 10 }, (_, index) => 100 + index); // 3 pages of 4 tokens

async function stack() {
    const pool = new PagePool({ numPages: 8, pageTokens: PAGE_TOKENS, pageBytes: PAGE_TOKENS * bytesPerToken(FAKE_LAYOUT) });
    const transfer = new PageTransfer(pool, FAKE_LAYOUT, layoutFingerprint(FAKE_LAYOUT, "fake"), {});
    const prefill = new FakeRoleContext("prefill", 2, 64, FAKE_LAYOUT, 2);
    const slot = prefill.acquireSequence()!;
    await prefill.evaluate(slot, TOKENS);
    const reserve = (holder: string) =>
        pool.reserve({ workspace: workspaceId("alice"), holder: requestId(holder), numPages: 3, firstToken: 0 });
    return { pool, transfer, prefill, source: () => sequenceStateSource(prefill, slot, "test"), reserve };
}

describe("PageTransfer.writeFrom", () => {
    it("saves into the pages in place and seals what a whole export written through the leases seals", async () => {
        const { pool, transfer, prefill, source, reserve } = await stack();
        const exported = reserve("exported");
        const whole = await transfer.writeFrom(exported, source());
        expect(prefill.numSavedIntoPages).toBe(0);

        prefill.saveIntoPages();
        const inPlace = reserve("in-place");
        const saved = await transfer.writeFrom(inPlace, source());
        expect(prefill.numSavedIntoPages).toBe(1);
        expect(prefill.numUnreleasedStates).toBe(0);
        expect(saved.tokens).toEqual(TOKENS);
        expect(saved.checksums).toEqual(whole.checksums);
        for (const [index, page] of saved.pages.entries()) {
            expect(pool.pageInfo(page).numValidBytes).toBe(pool.pageInfo(whole.pages[index]!).numValidBytes);
        }
        pool.release(exported);
        pool.release(inPlace);
        expectPoolDrained(pool);
    });

    it("exports the state whole when it is not the size planned, llama.cpp having written nothing", async () => {
        const { pool, transfer, prefill, source, reserve } = await stack();
        let numAsked = 0;
        const unplanned: StateSource = {
            ...source(),
            saveInto: () => {
                numAsked++;
                return Promise.resolve(false);
            }
        };
        const reservation = reserve("r1");
        const manifest = await transfer.writeFrom(reservation, unplanned);
        expect(numAsked).toBe(1);
        expect(manifest.tokens).toEqual(TOKENS);
        expect(manifest.checksums).toHaveLength(3);
        expect(prefill.numUnreleasedStates).toBe(0); // the whole export's memory went back once its bytes were in pages
        pool.release(reservation);
        expectPoolDrained(pool);
    });

    it("refuses a save whose metadata is not the plan's, recording nothing: the pages are zeroed when released", async () => {
        const { pool, transfer, prefill, source, reserve } = await stack();
        prefill.saveIntoPages();
        const saveInto = source().saveInto!;
        const otherLayout: StateSource = {
            ...source(),
            saveInto: async (target: StateTarget) => {
                const written = await saveInto(target);
                // layer 0's K type, after the header, the tokens, the stream and cell counts, the cells, the V flag and the layer count
                target.meta.writeInt32LE(0, 12 + 4 * TOKENS.length + 4 + 4 + 12 * TOKENS.length + 4 + 4);
                return written;
            }
        };
        const reservation = reserve("r1");
        const error = await transfer.writeFrom(reservation, otherLayout).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(StateLayoutMismatchError);
        expect((error as Error).message).toMatch(/layer 0 has kType 0, the context has 1/);
        for (const handle of reservation.pages) {
            expect(pool.pageInfo(handle.pageId).numValidBytes).toBe(0); // written into, never recorded
        }
        pool.release(reservation);
        expectPoolDrained(pool); // scanned: every page all zero
    });
});
