import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { drillCatalog } from "../../../engine/drills/drillCatalog.js";
import { runFaultDrill, UnknownDrillError } from "../../../engine/drills/runFaultDrill.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";

const expectedGuardErrors: Record<string, string | null> = {
    "foreign-manifest": "handoff_page_owner_mismatch",
    "flipped-byte": "handoff_checksum_mismatch",
    "skipped-scrub": null, // prevention: the pages were zero before the victim got them
    "late-write": "stale_write_refused"
};

describe("fault drills: each guard fires with its own error, and with it off the leak is seen", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => { runtime = await LlamaRuntime.start({ gpu: false }); });
    afterAll(async () => { await runtime.dispose(); });

    it.each(drillCatalog.map((drill) => drill.id))("%s", async (id) => {
        const report = await runFaultDrill(id, runtime);
        expect(report.id).toBe(id);
        expect(report.guardFired).toBe(true);
        expect(report.guardError?.code ?? null).toBe(expectedGuardErrors[id]);
        expect(report.victimClean).toBe(true);
        expect(report.leakObservedWithGuardOff, report.leakEvidence).toBe(true);
        expect(report.leakEvidence.length).toBeGreaterThan(20);
    });

    it("refuses an unknown drill", async () => {
        await expect(runFaultDrill("make-it-leak", runtime)).rejects.toBeInstanceOf(UnknownDrillError);
    });
});
