import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CanaryProbeResult, CanaryReport } from "../../../contract/isolation.js";
import { runCanaryProbe } from "../../../engine/canary/runCanaryProbe.js";
import type { PageManifest } from "../../../engine/handoff/PageManifest.js";
import { skippingScrubber } from "../../../engine/drills/leakyPolicies.js";
import { leakyReader } from "../../../engine/drills/leakyReader.js";
import { KvEngine, type KvEngineHooks } from "../../../engine/KvEngine.js";
import { ChatRenderer } from "../../../engine/runtime/ChatRenderer.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { Conversation, userMessage } from "../../support/chatDriver.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

/** The browser tests' engine: a 512-token window, two decode sequences, 96 pages of 16 tokens, short turns evaluated in place. */
const serviceConfig = {
    ...tinyEngineConfig,
    window: 512,
    prefillContextSize: 512,
    decodeContextSize: 512,
    numPages: 96,
    inPlacePrefillTokens: 128,
    gpu: false
} as const;

function probe(report: CanaryReport, id: CanaryProbeResult["id"]): CanaryProbeResult {
    const found = report.probes.find((candidate) => candidate.id === id);
    expect(found, `probe ${id}`).toBeDefined();
    return found!;
}

describe("the canary probe: markers in workspace A, probes from workspace B", () => {
    let runtime: LlamaRuntime;
    let service: EngineService;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        service = await EngineService.start({ modelPath: generatedModelPath("tiny"), ...serviceConfig }, { runtime });
    });
    afterAll(async () => {
        await service.dispose();
        await runtime.dispose();
    });

    it("passes on the tiny model beside users' workspaces, forgets its own, and the users' chats go on", async () => {
        const users = ["alice", "bob", "carol"].map((name) => new Conversation(name));
        for (const conversation of users) {
            await conversation.turn(service, userMessage(conversation.workspace, 0));
        }
        const before = service.engine
            .workspaces()
            .map((workspace) => workspace.id)
            .sort();

        const running = service.runCanary();
        await expect(service.runCanary()).rejects.toMatchObject({ code: "canary_running" }); // one at a time, refused in the engine
        const report = await running;

        expect(report.passed, JSON.stringify(report.probes, null, 2)).toBe(true);
        expect(report.markers).toHaveLength(2);
        for (const marker of report.markers) {
            expect(marker).toMatch(/^KV-CANARY-[A-Z2-7]{12}$/);
        }
        expect(report.markers[0]).not.toBe(report.markers[1]);
        expect(report.modelName).toBe("Kvault synthetic tiny");
        expect(report.fillerTokens).toBeGreaterThan(300); // sized from the 512-token window
        expect(report.promptTokens).toBeLessThanOrEqual(512 - 4);
        expect(report.numPagesA).toBe(Math.ceil((report.promptTokens - 1) / 16)); // A's prompt went through prefill and pages
        expect(report.probes.map((result) => [result.id, result.outcome])).toEqual([
            ["text-recall", "passed"],
            ["text-cue", "passed"],
            ["logprobs", "passed"],
            ["kv-pages", "passed"],
            ["kv-sequence", "passed"]
        ]);
        expect(probe(report, "text-recall").evidence).toMatch(/random weights/);
        const pages = probe(report, "kv-pages").numbers;
        expect(pages.numPagesReceived).toBeGreaterThanOrEqual(2); // B's first prompt was handed off too
        expect(pages.numNonZeroSlots).toBeGreaterThan(16);
        expect(pages.numSecretRows).toBeGreaterThan(300);
        expect(pages).toMatchObject({ numRowMatches: 0, numChecksumMatches: 0 });
        expect(probe(report, "kv-sequence").numbers).toMatchObject({ numExports: 2, numRowMatches: 0 });
        const logprobs = probe(report, "logprobs").numbers;
        expect(logprobs.maxAbsDiffNats).toBeLessThan(1e-3); // the engine's B and a fresh context agree: the CPU build is batch-invariant

        // Its workspaces are gone and their pages free; the users' are where they were, and chat on.
        expect(
            service.engine
                .workspaces()
                .map((workspace) => workspace.id)
                .sort()
        ).toEqual(before);
        expect(report.numFreePagesAfter).toBe(service.engine.pool.numFreePages);
        // Three users and the canary's two on two decode sequences: users may now wait in pages, the canary holds none.
        const owners = service.snapshot().pageMap.owners;
        expect(owners.filter((owner) => owner.startsWith("kvault-canary:"))).toEqual([]);
        const swapped = service.engine.workspaces().filter((workspace) => workspace.residency.kind === "swapped");
        expect(service.engine.pool.numLiveReservations).toBe(swapped.length);
        const numSwapPages = swapped.reduce(
            (sum, workspace) => sum + (workspace.residency.kind === "swapped" ? workspace.residency.manifest.pages.length : 0),
            0
        );
        expect(service.engine.pool.numFreePages + numSwapPages).toBe(service.engine.config.numPages);
        for (const conversation of users) {
            await conversation.turn(service, userMessage(conversation.workspace, 1));
        }
        expect((await service.audit()).ok).toBe(true);
        await expectEngineClean(service.engine);
    });

    it("refuses a filler the window cannot hold, and a user turn in a canary workspace", async () => {
        await expect(service.runCanary({ fillerTokens: 100_000 })).rejects.toMatchObject({
            code: "invalid_request",
            message: expect.stringMatching(/fillerTokens must be a whole number from 16 to/)
        });
        await expect(
            service.chat({
                requestId: "t",
                workspace: "kvault-canary:a:0123456789abcdef",
                messages: [{ role: "user", content: "hi" }],
                sampling: { temperature: 0, maxTokens: 2 }
            })
        ).rejects.toMatchObject({ code: "invalid_request" });
        await expect(service.forgetWorkspace("kvault-canary:b:0123456789abcdef")).rejects.toMatchObject({ code: "invalid_request" });
        const report = await service.runCanary({ fillerTokens: 64 });
        expect(report.passed).toBe(true);
        expect(report.fillerTokens).toBeGreaterThanOrEqual(60);
        expect(report.fillerTokens).toBeLessThan(120);
        await expectEngineClean(service.engine);
    });
});

describe("the canary probe has teeth: with a guard off in a sandbox, the KV probes see A's KV in B", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    async function sandbox(
        options: Parameters<typeof KvEngine.start>[1] & object,
        overrides: Partial<typeof serviceConfig> = {}
    ): Promise<KvEngine> {
        return KvEngine.start({ modelPath: generatedModelPath("tiny"), ...serviceConfig, ...overrides }, { runtime, ...options });
    }

    it("skipped scrub: B's pages come back holding A's rows past B's own positions", async () => {
        const engine = await sandbox({ policies: { scrubber: skippingScrubber } });
        try {
            const report = await runCanaryProbe(engine, new ChatRenderer(engine.model));
            expect(report.passed).toBe(false);
            const pages = probe(report, "kv-pages");
            expect(pages.outcome, pages.evidence).toBe("failed");
            expect(pages.numbers.numRowMatches).toBeGreaterThan(0);
            expect(pages.evidence).toMatch(
                /token slots in \d+ of B's \d+ received pages hold A's KV rows \(page \d+, received by req-\d+, slot \d+ = A's position \d+\)/
            );
            // Decode reads only each page's own positions: the rows sat in B's pages, B's sequence never loaded them.
            expect(probe(report, "kv-sequence").outcome).toBe("passed");
            expect(report.numFreePagesAfter).toBe(engine.config.numPages); // forgotten: free, though not zeroed (the fault)
        } finally {
            await engine.dispose();
        }
    });

    /** Hands B's first handoff workspace A's swapped pages instead of its own (the foreign-manifest drill's fault). */
    function foreignManifest(engine: () => KvEngine): KvEngineHooks {
        return {
            afterSeal: (manifest): PageManifest | void => {
                if (!manifest.workspace.startsWith("kvault-canary:b:")) {
                    return;
                }
                const residency = engine()
                    .workspaces()
                    .find((workspace) => workspace.id.startsWith("kvault-canary:a:"))?.residency;
                return residency?.kind === "swapped" ? residency.manifest : undefined;
            }
        };
    }

    it("foreign manifest, ownership and page-count checks off: B's decode is handed A's pages and the probe sees A's KV in them", async () => {
        const engine: KvEngine = await sandbox(
            { hooks: foreignManifest(() => engine), policies: { reader: leakyReader(["ownership", "pageCount"]) } },
            { numDecodeSequences: 1 }
        );
        try {
            const report = await runCanaryProbe(engine, new ChatRenderer(engine.model));
            expect(report.passed, JSON.stringify(report.probes, null, 2)).toBe(false);
            const pages = probe(report, "kv-pages");
            expect(pages.outcome, pages.evidence).toBe("failed");
            expect(pages.numbers.numChecksumMatches).toBeGreaterThan(0);
            expect(pages.numbers.numRowMatches).toBeGreaterThan(0);
        } finally {
            await engine.dispose();
        }
    });

    it("foreign manifest, every guard on: the handoff refuses A's pages, and the probe counts them as caught, not leaked", async () => {
        const engine: KvEngine = await sandbox({ hooks: foreignManifest(() => engine) }, { numDecodeSequences: 1 });
        try {
            const report = await runCanaryProbe(engine, new ChatRenderer(engine.model));
            expect(report.passed, JSON.stringify(report.probes, null, 2)).toBe(true);
            expect(probe(report, "text-recall")).toMatchObject({
                outcome: "skipped",
                evidence: expect.stringMatching(/^B's request ended with handoff_page_owner_mismatch/)
            });
            const pages = probe(report, "kv-pages");
            expect(pages.outcome).toBe("passed");
            expect(pages.numbers.numMatchesRefusedByGuard).toBeGreaterThan(0);
            expect(pages.evidence).toMatch(/refused \(handoff_page_owner_mismatch\) before decode read a byte/);
            await expectEngineClean(engine);
        } finally {
            await engine.dispose();
        }
    });
});
