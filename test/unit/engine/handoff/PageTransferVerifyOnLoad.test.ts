import { describe, expect, it, vi } from "vitest";
import { bytesPerToken, layoutFingerprint } from "../../../../engine/codec/KvLayout.js";
import type { StateChunks } from "../../../../engine/codec/statePages.js";
import { requestId, workspaceId } from "../../../../engine/core/ids.js";
import { leakyReader } from "../../../../engine/drills/leakyReader.js";
import { PageChecksumMismatchError } from "../../../../engine/handoff/integrityErrors.js";
import type { PageManifest } from "../../../../engine/handoff/PageManifest.js";
import { PageTransfer, type TransferTarget } from "../../../../engine/handoff/PageTransfer.js";
import { sequenceStateSource } from "../../../../engine/handoff/StateSource.js";
import { verifyingReader, type TransferReader } from "../../../../engine/handoff/TransferReader.js";
import { PagePool } from "../../../../engine/pages/PagePool.js";
import type { Reservation } from "../../../../engine/pages/Reservation.js";
import { FAKE_LAYOUT, FakeRoleContext } from "../../../support/FakeRoleContext.js";
import { expectPoolDrained, PAGE_TOKENS } from "../scheduler/schedulerFixtures.js";

// PageTransfer.load into a context that verifies pages as it loads them (Kvault's build, through
// memory): every check but the checksums before anything is assembled, the checksums recomputed by
// the load as it reads the pages, and the same integrity error as a verification beforehand gives.

const TOKENS = Array.from({ length: 10 }, (_, index) => 100 + index); // 3 pages of 4 tokens

async function stack(reader: TransferReader = verifyingReader) {
    const pool = new PagePool({ numPages: 8, pageTokens: PAGE_TOKENS, pageBytes: PAGE_TOKENS * bytesPerToken(FAKE_LAYOUT) });
    const transfer = new PageTransfer(pool, FAKE_LAYOUT, layoutFingerprint(FAKE_LAYOUT, "fake"), {}, undefined, reader);
    const prefill = new FakeRoleContext("prefill", 2, 64, FAKE_LAYOUT, 2).saveIntoPages();
    const slot = prefill.acquireSequence()!;
    await prefill.evaluate(slot, TOKENS);
    const decode = new FakeRoleContext("decode", 2, 64, FAKE_LAYOUT, 2);
    const reservation = pool.reserve({ workspace: workspaceId("alice"), holder: requestId("r1"), numPages: 3, firstToken: 0 });
    const manifest = await transfer.writeFrom(reservation, sequenceStateSource(prefill, slot, "test"));
    return { pool, transfer, decode, reservation, manifest };
}

function targetOf(decode: FakeRoleContext): TransferTarget {
    return { layout: FAKE_LAYOUT, numStreams: 2, verifiesPagesOnLoad: decode.verifiesPagesOnLoad };
}

/** Loads the manifest into a fresh sequence of `decode`; the chunks it was given, and its slot. */
async function loadInto(transfer: PageTransfer, decode: FakeRoleContext, manifest: PageManifest, reservation: Reservation) {
    const slot = decode.acquireSequence()!;
    const given: StateChunks[] = [];
    const expected = { holder: reservation.holder, workspace: reservation.workspace, generation: reservation.generation, tokens: TOKENS };
    const outcome = await transfer
        .load(manifest, expected, targetOf(decode), async (state) => {
            given.push(state);
            await decode.importState(slot, state);
        })
        .then(
            () => undefined,
            (error: unknown) => error
        );
    return { outcome, given, slot };
}

describe("PageTransfer.load into a context that verifies pages as it loads them", () => {
    it("loads the pages with their checksums recomputed by the load, never hashing them beforehand, and records them verified", async () => {
        const { pool, transfer, decode, reservation, manifest } = await stack();
        decode.verifyPagesOnLoad();
        const verifyPages = vi.spyOn(pool, "verifyPages");
        const recomputed = vi.spyOn(pool, "verifyPagesRecomputed");
        const { outcome, given, slot } = await loadInto(transfer, decode, manifest, reservation);
        expect(outcome).toBeUndefined();
        expect(slot.tokens).toEqual(TOKENS);
        expect(verifyPages).not.toHaveBeenCalled();
        expect(recomputed).toHaveBeenCalledTimes(1);
        expect(recomputed.mock.calls[0]![2]).toEqual(manifest.checksums);
        // every page chunk named by its page, the metadata's by -1; each page's valid bytes and seed given
        const checks = given[0]!.pageChecks!;
        expect(new Set(given[0]!.chunkPages)).toEqual(new Set([-1, 0, 1, 2]));
        expect(checks.pages.map((page) => page.length)).toEqual(manifest.pages.map((page) => pool.pageInfo(page).numValidBytes));
        expect(Array.from(checks.seeds)).toEqual([0n, 4n, 8n]);
        expect(Array.from(checks.expected)).toEqual(manifest.checksums);
        expect(pool.counters.checksumFailures).toBe(0);
        pool.release(reservation);
        expectPoolDrained(pool);
    });

    it("refuses a page whose byte changed after its seal with handoff_checksum_mismatch, the sequence left empty, counted as the pool counts a verification's", async () => {
        const { pool, transfer, decode, reservation, manifest } = await stack();
        decode.verifyPagesOnLoad();
        pool.injectByteFlip(manifest.pages[1]!, manifest.generation, 5);
        const { outcome, slot } = await loadInto(transfer, decode, manifest, reservation);
        expect(outcome).toBeInstanceOf(PageChecksumMismatchError);
        expect((outcome as Error).message).toMatch(
            new RegExp(`page ${manifest.pages[1]} \\(2 of 3\\) recomputes to [0-9a-f]+; it was sealed as`)
        );
        expect(decode.numLoadsRefused).toBe(1);
        expect(slot.tokens).toEqual([]);
        expect(pool.counters.checksumFailures).toBe(1);
        pool.release(reservation);
        expectPoolDrained(pool);
    });

    it("refuses a manifest that lists another checksum than the page was sealed with before anything is assembled or loaded", async () => {
        const { pool, transfer, decode, reservation, manifest } = await stack();
        decode.verifyPagesOnLoad();
        const forged = { ...manifest, checksums: manifest.checksums.map((checksum, index) => (index === 2 ? checksum ^ 1n : checksum)) };
        const { outcome, given } = await loadInto(transfer, decode, forged, reservation);
        expect(outcome).toBeInstanceOf(PageChecksumMismatchError);
        expect((outcome as Error).message).toMatch(
            new RegExp(`page ${manifest.pages[2]} \\(3 of 3\\) was sealed as [0-9a-f]+; the manifest lists`)
        );
        expect(given).toEqual([]);
        pool.release(reservation);
        expectPoolDrained(pool);
    });

    it("verifies beforehand, as always, for a context that does not verify on load and for a drill's leaky reader", async () => {
        for (const [reader, verifying] of [
            [verifyingReader, false],
            [leakyReader(["pageCount"]), true]
        ] as const) {
            const { pool, transfer, decode, reservation, manifest } = await stack(reader);
            if (verifying) {
                decode.verifyPagesOnLoad();
            }
            const verifyPages = vi.spyOn(pool, "verifyPages");
            const verify = vi.spyOn(pool, "verify");
            const { outcome, given, slot } = await loadInto(transfer, decode, manifest, reservation);
            expect(outcome).toBeUndefined();
            expect(given[0]!.pageChecks).toBeUndefined();
            expect(verifyPages.mock.calls.length + verify.mock.calls.length).toBeGreaterThan(0);
            expect(slot.tokens).toEqual(TOKENS);
            pool.release(reservation);
            expectPoolDrained(pool);
        }
    });
});
