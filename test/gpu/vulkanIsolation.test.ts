import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { drillCatalog } from "../../engine/drills/drillCatalog.js";
import { runFaultDrill } from "../../engine/drills/runFaultDrill.js";
import { KvEngine } from "../../engine/KvEngine.js";
import type { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { EngineService } from "../../engine/service/EngineService.js";
import { expectDrillHeld } from "../support/drillExpectations.js";
import { expectEngineClean, tinyEngineConfig } from "../support/engineFixtures.js";
import { generatedModelPath } from "../support/generatedModels.js";
import { expectEveryLayerOnDevice, startTestRuntime } from "../support/testRuntime.js";
import { expectSwapMatchesResident } from "../model/families/familyEquivalence.js";

/**
 * The canary's filler between A's markers, in tokens: three pages of 16, enough for its KV probes
 * to look for A's rows in B's pages and decode sequence, and short, as the family suite's.
 */
const CANARY_FILLER_TOKENS = 48;

/** One decode sequence: a second workspace swaps the first out into pages. */
const swappingConfig = { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, numDecodeSequences: 1 };

const MAX_TOKENS = 6;

describe("isolation on Vulkan, every layer on the device: swapping, the drills and the canary (tiny model)", () => {
    let runtime: LlamaRuntime;
    let service: EngineService;
    let unified: KvEngine;
    beforeAll(async () => {
        runtime = await startTestRuntime();
        service = await EngineService.start(swappingConfig, { runtime });
        unified = await KvEngine.start({ ...swappingConfig, mode: "unified" }, { runtime });
        expectEveryLayerOnDevice(service.engine);
    });
    afterAll(async () => {
        await unified?.dispose();
        await service?.dispose();
        await runtime?.dispose();
    });

    it("continues a swapped-out workspace from its pages exactly as a resident one, its prefix reused", async () => {
        await expectSwapMatchesResident(service.engine, unified, { paged: true }, MAX_TOKENS);
    });

    // Each drill's sandbox is its own engine on the runtime it is given: this one, on the device.
    it.each(drillCatalog.map((drill) => drill.id))("drill %s: its guard fires; with it off the leak is seen", async (id) => {
        expectDrillHeld(await runFaultDrill(id, runtime), id);
    });

    it("passes the canary's KV probes: B's pages and decode sequence hold none of A's rows", async () => {
        const report = await service.runCanary({ fillerTokens: CANARY_FILLER_TOKENS });
        expect(report.passed, JSON.stringify(report.probes, null, 2)).toBe(true);
        const kvProbes = report.probes.filter((probe) => probe.id === "kv-pages" || probe.id === "kv-sequence");
        expect(kvProbes.map((probe) => [probe.id, probe.outcome])).toEqual([
            ["kv-pages", "passed"],
            ["kv-sequence", "passed"]
        ]);
        expect(report.numPagesA).toBeGreaterThanOrEqual(3);
        expect(kvProbes[0]!.numbers).toMatchObject({ numRowMatches: 0, numChecksumMatches: 0 });
        expect(kvProbes[0]!.numbers.numSecretRows).toBeGreaterThan(0);
        expect(kvProbes[1]!.numbers).toMatchObject({ numRowMatches: 0 });
        expect(report.numFreePagesAfter).toBe(report.numFreePagesBefore);
        await expectEngineClean(service.engine);
    });
});
