import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { drillCatalog } from "../../../engine/drills/drillCatalog.js";
import { runFaultDrill, UnknownDrillError } from "../../../engine/drills/runFaultDrill.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { expectDrillHeld } from "../../support/drillExpectations.js";
import { stateDirectoriesOf } from "../process/supervisorFixtures.js";

/** From a short-handoff drill's evidence: bytes of A's KV found in the victim's, the bytes at those positions, and A's pages they came from. */
function bytesOfAIn(evidence: string): { bytesOfA: number; bytesThere: number; pagesOfA: number[] } {
    const match =
        /holds (?<bytesOfA>[\d,]+) bytes of workspace A's KV \(from A's pages (?<pages>[\d, ]+)\) among the (?<bytesThere>[\d,]+) bytes/.exec(
            evidence
        );
    expect(match, evidence).not.toBeNull();
    const count = (text: string): number => Number(text.replaceAll(",", ""));
    return {
        bytesOfA: count(match!.groups!.bytesOfA!),
        bytesThere: count(match!.groups!.bytesThere!),
        pagesOfA: match!.groups!.pages!.split(", ").map(Number)
    };
}

describe("fault drills: each guard fires with its own error, and with it off the leak is seen", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
    });
    afterAll(async () => {
        await runtime.dispose();
        expect(stateDirectoriesOf(process.pid)).toEqual([]); // every sandbox removed its state directory
    });

    it.each(drillCatalog.map((drill) => drill.id))("%s", async (id) => {
        expectDrillHeld(await runFaultDrill(id, runtime), id);
    });

    it("undersized-prefill-pool: rejected at the door with the numbers; with admission off, decode computes over 18 pages it never received, 12 of them A's", async () => {
        const report = await runFaultDrill("undersized-prefill-pool", runtime);
        expect(report.failureModes).toEqual(["decode-over-stale-pages", "undersized-prefill-pool"]);
        expect(report.guardError).toEqual({
            code: "context_length_exceeded",
            message:
                "This request needs 304 tokens (300 of prompt + 4 to generate); the limit is 256, set by the measured prefill capacity. " +
                "Shorten the prompt, ask for fewer tokens, or start a new chat. (In the sandbox: 0 pages reserved for the victim, 0 tokens decoded.)"
        });
        const evidence = report.leakEvidence;
        expect(evidence).toMatch(
            /^The 304-token request was admitted against the configured window \(512\), though the prefill holds 256: prefill handed over 1 page of the 19 decode reserved and reported the transfer complete\. Decode computed over the 18 pages it never received: the victim's decode sequence now holds [\d,]+ bytes of workspace A's KV \(from A's pages [\d, ]+\) among the [\d,]+ bytes at its positions \[16, 299\), and it answered 4 tokens as if nothing had happened\.$/
        );
        const found = bytesOfAIn(evidence);
        expect(found.pagesOfA).toHaveLength(12); // A's 199 handed-off positions filled 13 pages; the victim's one-page stub overwrote one of them
        // 12 full pages of A (192 positions) among the 283 positions never received (the other pages had never been used):
        // at most that share of the bytes there, less the bytes of A's that are zero.
        expect(found.bytesOfA / found.bytesThere).toBeGreaterThan((0.6 * 192) / 283);
        expect(found.bytesOfA / found.bytesThere).toBeLessThanOrEqual(192 / 283);
    });

    it("dropped-pages: refused by the page count; with the check off, the 2 pages never received hold A's KV in the victim's", async () => {
        const report = await runFaultDrill("dropped-pages", runtime);
        expect(report.guardError?.message).toBe(
            "KV handoff refused: 39 tokens at 16 per page need 3 pages; the manifest lists 1 pages, 1 checksums and 39 tokens. " +
                "Nothing was decoded; the engine is healthy, retry the request. (In the sandbox: 3 pages reserved for the victim, 0 tokens decoded.)"
        );
        expect(report.leakEvidence).toMatch(
            /^The transport delivered 1 of the victim's 3 pages, and decode did not count them against the 39 tokens it expected\. Decode computed over the 2 pages it never received: the victim's decode sequence now holds [\d,]+ bytes of workspace A's KV \(from A's pages \d+, \d+\) among the [\d,]+ bytes at its positions \[16, 39\), and it answered 4 tokens as if nothing had happened\.$/
        );
        const found = bytesOfAIn(report.leakEvidence);
        expect(found.pagesOfA).toHaveLength(2);
        expect(found.bytesOfA / found.bytesThere).toBeGreaterThan(0.6); // every non-zero byte there is A's
    });

    it("replayed-completion: the stale completion is ignored and counted; without generation tags the victim loads A's KV though every checksum matched", async () => {
        const report = await runFaultDrill("replayed-completion", runtime);
        expect(report.guardError?.message).toMatch(
            /^A completion of req-1 at generation 1 reached req-2 at generation 3; it was ignored by its generation tag and changed nothing\. The victim was served from its own pages; page 0 is still swap-drill-workspace-a-1's at generation 2\.$/
        );
        expect(report.leakEvidence).toMatch(
            /^Workspace A's completion for page 0 \(request req-1, generation 1\) reached the victim's reader after the page was released and reserved again by swap-drill-workspace-a-1 of drill-workspace-a at generation 2\. Taken by its handle alone, it was applied: the victim's decode sequence loaded 16 tokens of A's KV instead of its own, and answered 4 tokens over it\./
        );
    });

    it("refuses an unknown drill", async () => {
        await expect(runFaultDrill("make-it-leak", runtime)).rejects.toBeInstanceOf(UnknownDrillError);
    });
});
