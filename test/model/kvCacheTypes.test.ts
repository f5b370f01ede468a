import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KvCacheTypeError } from "../../engine/codec/codecErrors.js";
import { kvCacheTypes, kvCacheTypeTraits, kvRowBytes, type KvCacheType } from "../../engine/codec/kvCacheTypes.js";
import { bytesPerToken } from "../../engine/codec/KvLayout.js";
import { EngineConfigError } from "../../engine/EngineConfig.js";
import { writeGgufFile } from "../../synthetic/gguf/writeGgufFile.js";
import { KvEngine, type KvEngineHooks } from "../../engine/KvEngine.js";
import { headDimension, modelPresets } from "../../synthetic/model/modelPresets.js";
import { planSyntheticModel } from "../../synthetic/model/syntheticModel.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { expectEngineClean, freshWorkspace, promptOf, startTinyEngine, tinyEngineConfig } from "../support/engineFixtures.js";
import { expectCorruptedHandoffRefused } from "../support/corruptedHandoff.js";
import { generatedModelPath } from "../support/generatedModels.js";

const MAX_TOKENS = 8;
const tiny = modelPresets.tiny;
/** Values of one position's K (and V) in one layer of the tiny model: its KV heads × head width. */
const kvValuesPerLayer = tiny.numKvHeads * headDimension(tiny);

// One decode sequence, so a second workspace swaps the first out to pages; flash attention on, as every quantized type needs.
describe.each(kvCacheTypes)("a %s KV cache", (kvCacheType: KvCacheType) => {
    let runtime: LlamaRuntime;
    let split: KvEngine;
    let unified: KvEngine;
    const hooks: KvEngineHooks = {};

    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        split = await startTinyEngine(runtime, { kvCacheType, numDecodeSequences: 1 }, hooks);
        unified = await startTinyEngine(runtime, { kvCacheType, numDecodeSequences: 1, mode: "unified" });
    });
    afterAll(async () => {
        await unified?.dispose();
        await split?.dispose();
        await runtime?.dispose();
    });

    it("is what llama.cpp wrote: every layer's K and V in the type, rows of whole blocks, pages of whole rows", () => {
        const { ggmlType } = kvCacheTypeTraits[kvCacheType];
        const rowBytes = kvRowBytes(kvCacheType, kvValuesPerLayer)!;
        expect(rowBytes).toBe({ f16: 128, q8_0: 68, q4_0: 36 }[kvCacheType]);
        expect(split.layout.vTransposed).toBe(false);
        expect(split.layout.layers).toHaveLength(tiny.numLayers);
        for (const layer of split.layout.layers) {
            expect(layer).toEqual({
                kType: ggmlType,
                vType: ggmlType,
                kRowBytes: rowBytes,
                vRowBytes: rowBytes,
                vElementBytes: 0,
                numVElements: 0
            });
        }
        expect(bytesPerToken(split.layout)).toBe(tiny.numLayers * 2 * rowBytes);
        expect(split.pool.config.pageBytes).toBe(16 * tiny.numLayers * 2 * rowBytes);
    });

    it("hands prompts through pages and generates exactly what unified mode generates, token for token", async () => {
        // page boundaries at 16 and 32 by one either way
        for (const numPromptTokens of [16, 17, 18, 33, 100]) {
            const prompt = promptOf(split, numPromptTokens);
            const served = await split.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
            const reference = await unified.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
            expect(served.numHandedOffTokens).toBe(numPromptTokens - 1);
            expect(served.tokens.length).toBeGreaterThan(0);
            expect(served.tokens, `${numPromptTokens}-token prompt`).toEqual(reference.tokens);
            await expectEngineClean(split);
            await unified.forgetAllWorkspaces();
        }
    });

    it("swaps a workspace out to pages and back in, and continues exactly as a resident one", async () => {
        const [a, b, resident] = [freshWorkspace(), freshWorkspace(), freshWorkspace()];
        const first = promptOf(split, 40, "a: ");
        const counters = { ...split.counters };
        const answer = await split.generate({ workspace: a, promptTokens: first, maxTokens: MAX_TOKENS });
        await split.generate({ workspace: b, promptTokens: promptOf(split, 30, "b: "), maxTokens: 4 }); // takes a's sequence
        expect(split.workspaces().find((workspace) => workspace.id === a)?.residency.kind).toBe("swapped");
        const next = [...first, ...answer.tokens, ...split.tokenize(" and then?")];
        const continued = await split.generate({ workspace: a, promptTokens: next, maxTokens: MAX_TOKENS });
        expect(split.counters.swapIns - counters.swapIns).toBe(1);
        expect(split.counters.swapDrops).toBe(counters.swapDrops);
        expect(continued.numReusedTokens).toBeGreaterThan(first.length);

        const residentAnswer = await unified.generate({ workspace: resident, promptTokens: first, maxTokens: MAX_TOKENS });
        expect(residentAnswer.tokens).toEqual(answer.tokens);
        const residentContinued = await unified.generate({ workspace: resident, promptTokens: next, maxTokens: MAX_TOKENS });
        expect(continued.tokens).toEqual(residentContinued.tokens);
        await expectEngineClean(split);
        await unified.forgetAllWorkspaces();
    });

    it("refuses a handoff whose page was corrupted after sealing, decodes nothing over it, and serves the next request", async () => {
        const prompt = promptOf(split, 40, "flip: ");
        await expectCorruptedHandoffRefused(split, hooks, prompt, MAX_TOKENS);
        const next = await split.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
        const reference = await unified.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
        expect(next.tokens).toEqual(reference.tokens);
        await expectEngineClean(split);
        await unified.forgetAllWorkspaces();
    });
});

describe("a KV cache type the model cannot take", () => {
    let runtime: LlamaRuntime;
    let directory: string;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-kv-types-"));
    });
    afterAll(async () => {
        await runtime?.dispose();
        fs.rmSync(directory, { recursive: true, force: true });
    });

    it("is refused with the reason when flash attention is off, before anything is loaded", async () => {
        for (const kvCacheType of ["q8_0", "q4_0"] as const) {
            await expect(startTinyEngine(runtime, { kvCacheType, flashAttention: false })).rejects.toSatisfy(
                (error) =>
                    error instanceof EngineConfigError &&
                    error.code === "invalid_engine_config" &&
                    error.message.includes(`kvCacheType ${kvCacheType} needs flash attention`)
            );
        }
    });

    it("is refused with the head width when heads are not whole blocks, before the model is loaded", async () => {
        // 8 heads of 16 values: a K row (2 KV heads, 32 values) is one block, but llama.cpp quantizes per head
        const narrowHeads = path.join(directory, "tiny-16-wide-heads.gguf");
        writeGgufFile(narrowHeads, planSyntheticModel({ ...tiny, numHeads: 8 }));
        const error = await KvEngine.start({ ...tinyEngineConfig, modelPath: narrowHeads, kvCacheType: "q8_0" }, { runtime }).catch(
            (reason: unknown) => reason
        );
        expect(error).toBeInstanceOf(KvCacheTypeError);
        expect(error).toMatchObject({
            code: "kv_cache_type_unsupported",
            message: expect.stringContaining("the llama model's K heads are 16 values wide, not a whole number of Q8_0's 32-value blocks")
        });
        // the same file runs with an F16 cache
        const engine = await KvEngine.start({ ...tinyEngineConfig, modelPath: narrowHeads, kvCacheType: "f16" }, { runtime });
        try {
            expect(engine.layout.layers[0]!.kRowBytes, "2 KV heads × 16 values × 2 bytes").toBe(64);
        } finally {
            await engine.dispose();
        }
    });

    it("leaves the tiny model's F16 engines as they were: the default type is F16", async () => {
        const engine = await KvEngine.start({ ...tinyEngineConfig, modelPath: generatedModelPath("tiny") }, { runtime });
        try {
            expect(engine.config.kvCacheType).toBe("f16");
            expect(engine.layout.layers[0]!.kType).toBe(kvCacheTypeTraits.f16.ggmlType);
        } finally {
            await engine.dispose();
        }
    });
});
