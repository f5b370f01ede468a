import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { layoutFingerprint } from "../../../engine/codec/KvLayout.js";
import { writeGgufFile } from "../../../synthetic/gguf/writeGgufFile.js";
import type { PageManifest } from "../../../engine/handoff/PageManifest.js";
import type { KvEngine, KvEngineHooks } from "../../../engine/KvEngine.js";
import { modelFingerprint } from "../../../engine/model/modelFingerprint.js";
import { modelPresets } from "../../../synthetic/model/modelPresets.js";
import { planSyntheticModel } from "../../../synthetic/model/syntheticModel.js";
import type { PagePool } from "../../../engine/pages/PagePool.js";
import type { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { expectEveryLayerOnDevice, startTestRuntime } from "../../support/testRuntime.js";
import { alice, bob, expectEngineClean, freshWorkspace, promptOf, startTinyEngine } from "../../support/engineFixtures.js";

const MAX_TOKENS = 6;
/** 39 handed-off positions: three pages of 16, the last partly filled. */
const NUM_PROMPT_TOKENS = 40;

describe("each broken handoff is refused with its own error, and the engine stays healthy", () => {
    let runtime: LlamaRuntime;
    let engine: KvEngine;
    let reference: readonly number[];
    let otherModelDirectory: string;
    const hooks: KvEngineHooks = {};

    beforeAll(async () => {
        runtime = await startTestRuntime();
        engine = await startTinyEngine(runtime, {}, hooks);
        expectEveryLayerOnDevice(engine);
        const unified = await startTinyEngine(runtime, { mode: "unified" });
        reference = (await unified.generate({ workspace: alice, promptTokens: promptOf(engine, NUM_PROMPT_TOKENS), maxTokens: MAX_TOKENS }))
            .tokens;
        await unified.dispose();
        otherModelDirectory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-other-model-"));
    });
    afterAll(async () => {
        await engine.dispose();
        await runtime.dispose();
        fs.rmSync(otherModelDirectory, { recursive: true, force: true });
    });
    beforeEach(() => {
        delete hooks.afterSeal;
    });

    async function expectRefusedThenHealthy(
        tamper: (manifest: PageManifest, pool: PagePool) => PageManifest | void,
        code: string
    ): Promise<void> {
        const integrityFailuresBefore = engine.counters.integrityFailures;
        const tokensSeen: number[] = [];
        hooks.afterSeal = tamper;
        await expect(
            engine.generate({
                workspace: freshWorkspace(),
                promptTokens: promptOf(engine, NUM_PROMPT_TOKENS),
                maxTokens: MAX_TOKENS,
                onToken: (t) => {
                    tokensSeen.push(t);
                }
            })
        ).rejects.toMatchObject({
            code,
            message: expect.stringMatching(/^KV handoff refused: .+ Nothing was decoded; the engine is healthy, retry the request\.$/)
        });
        delete hooks.afterSeal;
        expect(tokensSeen).toEqual([]); // nothing decoded over what did not arrive
        expect(engine.counters.integrityFailures).toBe(integrityFailuresBefore + 1);
        await expectEngineClean(engine);

        const next = await engine.generate({
            workspace: freshWorkspace(),
            promptTokens: promptOf(engine, NUM_PROMPT_TOKENS),
            maxTokens: MAX_TOKENS
        });
        expect(next.tokens).toEqual(reference);
        await expectEngineClean(engine);
    }

    it("serves the clean handoff exactly as unified mode", async () => {
        const result = await engine.generate({
            workspace: alice,
            promptTokens: promptOf(engine, NUM_PROMPT_TOKENS),
            maxTokens: MAX_TOKENS
        });
        expect(result.tokens).toEqual(reference);
        await expectEngineClean(engine);
    });

    it("pages dropped from the transfer: one page of three delivered", async () => {
        await expectRefusedThenHealthy(
            (manifest) => ({ ...manifest, pages: manifest.pages.slice(0, 1), checksums: manifest.checksums.slice(0, 1) }),
            "handoff_page_count_mismatch"
        );
    });

    it("a byte flipped in a sealed page after sealing", async () => {
        await expectRefusedThenHealthy((manifest, pool) => {
            pool.injectByteFlip(manifest.pages[1]!, manifest.generation, 100);
        }, "handoff_checksum_mismatch");
    });

    it("a manifest of another request (the previous request's, replayed)", async () => {
        let previous: PageManifest | undefined;
        hooks.afterSeal = (manifest) => {
            previous = manifest;
        };
        await engine.generate({ workspace: bob, promptTokens: promptOf(engine, NUM_PROMPT_TOKENS), maxTokens: 1 });
        expect(previous).toBeDefined();
        await expectRefusedThenHealthy(() => previous, "handoff_page_owner_mismatch");
    });

    it("a manifest of another generation", async () => {
        await expectRefusedThenHealthy((manifest) => ({ ...manifest, generation: manifest.generation - 1 }), "handoff_page_owner_mismatch");
    });

    it("pages in the wrong order: positions not contiguous", async () => {
        await expectRefusedThenHealthy(
            (manifest) => ({
                ...manifest,
                pages: [manifest.pages[1]!, manifest.pages[0]!, manifest.pages[2]!],
                checksums: [manifest.checksums[1]!, manifest.checksums[0]!, manifest.checksums[2]!]
            }),
            "handoff_positions_not_contiguous"
        );
    });

    it("KV written by another model of the same geometry (another seed)", async () => {
        const otherModelPath = path.join(otherModelDirectory, "tiny-other-seed.gguf");
        writeGgufFile(otherModelPath, planSyntheticModel({ ...modelPresets.tiny, seed: 12345 }));
        const otherFingerprint = modelFingerprint(otherModelPath);
        expect(otherFingerprint).not.toBe(engine.modelFingerprint);
        await expectRefusedThenHealthy(
            (manifest) => ({ ...manifest, layoutFingerprint: layoutFingerprint(engine.layout, otherFingerprint) }),
            "handoff_layout_mismatch"
        );
    });
});
