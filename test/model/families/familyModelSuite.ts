import { resolveChatWrapper, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineConfigInput } from "../../../engine/EngineConfig.js";
import { GgmlTensorType } from "../../../engine/gguf/ggufTypes.js";
import { readGgufHeader } from "../../../gguf/index.js";
import { readTaggedGgufMetadata } from "../../../synthetic/gguf/taggedGgufMetadata.js";
import { KvEngine, type KvEngineHooks } from "../../../engine/KvEngine.js";
import { familyPresets, modelFamilies, type FamilyPresetName } from "../../../synthetic/model/familyPresets.js";
import { familyVocabularies } from "../../../synthetic/model/familyVocabularies.js";
import { matrixTypeFor, quantTraits, type ModelQuant } from "../../../synthetic/model/modelQuantization.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { servedModelEntry } from "../../../host/http/servedModelEntry.js";
import { Conversation } from "../../support/chatDriver.js";
import { expectEngineClean, freshWorkspace, promptOf } from "../../support/engineFixtures.js";
import { expectCorruptedHandoffRefused } from "../../support/corruptedHandoff.js";
import { ensureDequantizedTwin, ensureFamilyModel } from "../../support/generatedModels.js";
import { expectSplitMatchesUnified, expectSwapMatchesResident, type FamilyMemory } from "./familyEquivalence.js";
import { maxLogprobDifference, nextTokenProbabilities, tokenizerTestCases } from "./familyProbes.js";

export interface FamilyExpectations {
    readonly preset: FamilyPresetName;
    readonly quants: readonly ModelQuant[];
    /** The real model's general.name and file name, and the chat wrapper node-llama-cpp resolves for it. */
    readonly realModel: { readonly name: string; readonly fileName: string; readonly chatWrapper: string };
    /** Split mode through pages, or unified mode and the reason it gives. */
    readonly memory: FamilyMemory;
    /** Pieces the tokenizer reads as one special token each. */
    readonly specialTokens: readonly string[];
}

/**
 * One decode sequence, so a second workspace swaps the first out; every prompt goes through prefill
 * and pages. Flash attention off: llama.cpp's CPU flash attention rounds differently by batch size
 * (a prompt evaluated whole, or as prefill's n − 1 tokens and decode's last one, differs by up to
 * 0.04 in log-probability), which flips near-ties among these models' flat distributions over
 * 32k–262k tokens. Without it both evaluations are bit-identical, so token-for-token equality is
 * the test; the flash-attention layout (V in rows) gets its own test, by distributions.
 */
const familyEngineConfig: Omit<EngineConfigInput, "modelPath"> = {
    window: 512,
    prefillContextSize: 512,
    decodeContextSize: 512,
    numDecodeSequences: 1,
    pageTokens: 16,
    numPages: 96,
    inPlacePrefillTokens: 0,
    flashAttention: false
};

/** Largest |Δ log p| over each position's 50 likeliest tokens, quantized file against its dequantized twin. */
const twinTolerance: Readonly<Record<ModelQuant, number>> = { f16: 0.01, q8_0: 0.1, q4_0: 0.1, q4_k: 0.2 };

const MAX_TOKENS = 8;

/**
 * The canary's filler between A's markers, in tokens. Its KV probes need A's rows over a few pages
 * (48 tokens: three pages of 16), not a long prompt; the cost that matters is its logprobs probe,
 * which compares every step's distribution with a fresh context's over the vocabulary (262k tokens
 * for gemma3), so a short filler keeps one run to a few seconds on the tiny presets. The default
 * filler (the whole 512-token window) is what made gemma3 pass the 120 s limit on a loaded machine.
 */
const CANARY_FILLER_TOKENS = 48;

/**
 * One canary run per family, its own limit, from the work it does. What is left after the short
 * filler is fixed work that grows with the vocabulary: the text probes' greedy steps with top-40
 * log-probabilities, and the fresh context they are compared with, each step a distribution over
 * every token. Measured on two cores shared with other test runs: gemma3 (262k tokens) 37 s,
 * qwen2 (152k) 45–91 s, llama3 (128k) 14 s, phi3 and mistral (32k) 4–7 s. A minute, plus a second
 * per thousand tokens: 92 s for 32k, 212 s for qwen2's 152k, 322 s for gemma3's 262k.
 */
function canaryTimeoutMs(numVocabularyTokens: number): number {
    return 60_000 + Math.ceil(numVocabularyTokens / 1_000) * 1_000;
}

/** The first generated token's 20 likeliest candidates and their log-probabilities. */
async function firstTokenLogprobs(engine: KvEngine, prompt: readonly number[]): Promise<Map<number, number>> {
    const candidates = new Map<number, number>();
    await engine.generate({
        workspace: freshWorkspace(),
        promptTokens: prompt,
        maxTokens: 1,
        logprobs: { top: 20 },
        onToken: (_, probabilities) => {
            for (const { token, logprob } of probabilities?.top ?? []) {
                candidates.set(token, logprob);
            }
        }
    });
    return candidates;
}

export function describeFamily({ preset, quants, realModel, memory, specialTokens }: FamilyExpectations): void {
    const family = modelFamilies[familyPresets[preset].family];

    describe.each(quants)(`the ${preset} model in %s`, (quant) => {
        let runtime: LlamaRuntime;
        let modelPath: string;
        let model: LlamaModel;
        let service: EngineService;
        let engine: KvEngine;
        let unified: KvEngine;
        const hooks: KvEngineHooks = {};

        beforeAll(async () => {
            modelPath = ensureFamilyModel(preset, quant);
            runtime = await LlamaRuntime.start({ gpu: false });
            service = await EngineService.start({ modelPath, ...familyEngineConfig }, { runtime, hooks });
            engine = service.engine;
            model = engine.model;
            // the reference: the same contexts in unified mode; one workspace at a time, so nothing is ever evicted
            unified = await KvEngine.start({ modelPath, ...familyEngineConfig, mode: "unified" }, { runtime });
        });
        afterAll(async () => {
            await unified?.dispose();
            await service?.dispose();
            await runtime?.dispose();
        });

        it(`is a ${family.architecture} file with every weight matrix in ${quant} where its rows are whole blocks`, () => {
            const header = readGgufHeader(modelPath);
            const metadata = readTaggedGgufMetadata(modelPath);
            expect(metadata.get("general.architecture")).toEqual({ type: "string", value: family.architecture });
            expect(metadata.get("general.file_type")).toEqual({ type: "u32", value: quantTraits[quant].fileType });
            const matrices = header.tensors.filter((tensor) => tensor.dims.length === 2);
            expect(matrices.length).toBeGreaterThan(2);
            for (const tensor of matrices) {
                expect(tensor.ggmlType, tensor.name).toBe(matrixTypeFor(quant, tensor.dims[0]!));
            }
            const numQuantized = matrices.filter((tensor) => tensor.ggmlType !== GgmlTensorType.F16).length;
            expect(numQuantized, "matrices stored quantized").toBe(quant === "f16" ? 0 : matrices.length);
            for (const tensor of header.tensors.filter((tensor) => tensor.dims.length === 1)) {
                expect(tensor.ggmlType, tensor.name).toBe(GgmlTensorType.F32);
            }
            expect(model.fileInfo.metadata.general.architecture).toBe(family.architecture);
        });

        it("tokenizes as the real tokenizer does: llama.cpp's own test cases for the vocabulary, and the special tokens", () => {
            const cases = tokenizerTestCases(familyVocabularies[family.vocabulary].file);
            expect(cases.length).toBeGreaterThan(20);
            for (const { text, tokens } of cases) {
                expect(model.tokenize(text, false), JSON.stringify(text)).toEqual(tokens);
            }
            for (const special of specialTokens) {
                const tokens = model.tokenize(special, true);
                expect(tokens, special).toHaveLength(1);
                expect(model.detokenize(tokens, true)).toBe(special);
            }
        });

        it(`resolves the chat wrapper the real ${realModel.name} gets (${realModel.chatWrapper})`, () => {
            const ours = resolveChatWrapper(model);
            const real = resolveChatWrapper({
                bosString: model.tokens.bosString,
                architecture: model.fileInfo.metadata.general.architecture,
                filename: realModel.fileName,
                fileInfo: {
                    ...model.fileInfo,
                    metadata: { ...model.fileInfo.metadata, general: { ...model.fileInfo.metadata.general, name: realModel.name } }
                },
                tokenizer: model.tokenizer
            });
            expect(real?.constructor.name).toBe(realModel.chatWrapper);
            expect(ours.constructor.name).toBe(realModel.chatWrapper);
        });

        if (quant !== "f16") {
            it(`reads every ${quant} block as llama.cpp does: next-token log-probabilities match the dequantized F16 twin's`, async () => {
                const twin = await runtime.loadModel(ensureDequantizedTwin(preset, quant));
                try {
                    const tokens = promptOf(engine, 32);
                    const quantized = await nextTokenProbabilities(model, tokens);
                    const reference = await nextTokenProbabilities(twin, tokens);
                    expect(maxLogprobDifference(quantized, reference)).toBeLessThan(twinTolerance[quant]);
                } finally {
                    await twin.dispose();
                }
            });
        }

        it(
            memory.paged
                ? "hands prompts through pages and generates exactly what unified mode and a fresh context generate"
                : "runs unified and says why, and generates exactly what a fresh context generates",
            async () => {
                if (memory.paged) {
                    expect(service.info().mode).toEqual({ requested: "split", effective: "split" });
                } else {
                    expect(service.info().mode).toEqual({
                        requested: "split",
                        effective: "unified",
                        reason: expect.stringMatching(memory.reason)
                    });
                    expect(engine.prefill).toBeUndefined();
                }
                // page boundaries at 16 and 32 by one either way, and a prompt beyond any sliding window
                for (const numPromptTokens of [17, 33, 100]) {
                    const served = await expectSplitMatchesUnified(engine, unified, memory, numPromptTokens, MAX_TOKENS);
                    if (numPromptTokens === 100) {
                        const replay = await engine.replay(served.request);
                        expect(replay.identical, "replayed alone in a fresh context").toBe(true);
                    }
                    await expectEngineClean(engine);
                    await unified.forgetAllWorkspaces();
                }
            }
        );

        it(
            memory.paged
                ? "swaps a workspace out to pages and back in, and continues exactly as a resident one"
                : "evicts a workspace by forgetting its KV (it cannot be paged) and recomputes it, continuing exactly as a resident one",
            () => expectSwapMatchesResident(engine, unified, memory, MAX_TOKENS)
        );

        if (memory.paged && quant === quants[0]) {
            it("with flash attention (V kept in rows) hands off KV that gives unified mode's next-token distribution", async () => {
                const splitFlash = await KvEngine.start({ modelPath, ...familyEngineConfig, flashAttention: true }, { runtime });
                const unifiedFlash = await KvEngine.start(
                    { modelPath, ...familyEngineConfig, flashAttention: true, mode: "unified" },
                    { runtime }
                );
                try {
                    expect(splitFlash.layout.vTransposed).toBe(false);
                    expect(engine.layout.vTransposed).toBe(true);
                    for (const numPromptTokens of [33, 100]) {
                        const prompt = promptOf(engine, numPromptTokens);
                        const served = await firstTokenLogprobs(splitFlash, prompt);
                        const reference = await firstTokenLogprobs(unifiedFlash, prompt);
                        const common = [...served.keys()].filter((token) => reference.has(token));
                        expect(common.length, "shared top-20 candidates").toBeGreaterThanOrEqual(15);
                        for (const token of common) {
                            expect(Math.abs(served.get(token)! - reference.get(token)!), `token ${token}`).toBeLessThan(0.1);
                        }
                    }
                    await expectEngineClean(splitFlash);
                } finally {
                    await splitFlash.dispose();
                    await unifiedFlash.dispose();
                }
            });
        }

        if (memory.paged) {
            it("refuses a handoff whose page was corrupted after sealing, decodes nothing over it, and serves the next request", async () => {
                const prompt = promptOf(engine, 40, "flip: ");
                const reference = await unified.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
                await expectCorruptedHandoffRefused(engine, hooks, prompt, MAX_TOKENS);
                const next = await engine.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
                expect(next.tokens).toEqual(reference.tokens);
                await expectEngineClean(engine);
                await unified.forgetAllWorkspaces();
            });
        } else {
            it("reserves no page and hands nothing off: there is no handoff to corrupt", () => {
                expect(engine.pool.counters.numReservations).toBe(0);
                expect(engine.layout.layers).toEqual([]);
            });
        }

        if (quant === quants[0]) {
            it(
                memory.paged
                    ? "passes the canary's KV probes: B's pages and decode sequence hold none of A's rows"
                    : "runs the canary with its KV probes skipped for the reason the API and the model panel show",
                async () => {
                    const report = await service.runCanary({ fillerTokens: CANARY_FILLER_TOKENS });
                    expect(report.passed, JSON.stringify(report.probes, null, 2)).toBe(true);
                    const kvProbes = report.probes.filter((probe) => probe.id === "kv-pages" || probe.id === "kv-sequence");
                    expect(kvProbes.map((probe) => probe.id)).toEqual(["kv-pages", "kv-sequence"]);
                    const entry = servedModelEntry(preset, service.info(), undefined) as { kvault: Record<string, unknown> };
                    if (memory.paged) {
                        expect(kvProbes.map((probe) => probe.outcome)).toEqual(["passed", "passed"]);
                        expect(report.numPagesA).toBeGreaterThanOrEqual(3);
                        expect(kvProbes[0]!.numbers).toMatchObject({ numRowMatches: 0, numChecksumMatches: 0 });
                        expect(kvProbes[0]!.numbers.numSecretRows).toBeGreaterThan(0);
                        expect(kvProbes[1]!.numbers).toMatchObject({ numRowMatches: 0 });
                        expect(entry.kvault).toMatchObject({ mode: "split", paged: true });
                        expect(entry.kvault.unpaged_reason).toBeUndefined();
                    } else {
                        // never silently: the reason the engine fell back is the API's and the canary's
                        expect(kvProbes.map((probe) => probe.outcome)).toEqual(["skipped", "skipped"]);
                        expect(report.numPagesA).toBe(0);
                        const reason = service.info().mode.reason!;
                        expect(reason).toMatch(memory.reason);
                        expect(kvProbes[1]!.evidence).toContain(reason);
                        expect(entry.kvault).toMatchObject({ mode: "unified", paged: false, unpaged_reason: reason });
                    }
                    expect(report.numFreePagesAfter).toBe(report.numFreePagesBefore);
                    await expectEngineClean(engine);
                },
                canaryTimeoutMs(familyVocabularies[family.vocabulary].numTokens)
            );
        }

        it("counts every turn's tokens as node-llama-cpp's own token meters do, and holds what the sequence holds", async () => {
            const meter = (): number => engine.decode.numEvaluatedTokens + (engine.prefill?.numEvaluatedTokens ?? 0);
            const conversations = [new Conversation("meter-a"), new Conversation("meter-b")];
            for (let turn = 0; turn < 3; turn++) {
                for (const conversation of conversations) {
                    const before = meter();
                    const { usage, finishReason } = await conversation.turn(
                        service,
                        `Turn ${turn}: how many pages hold ${turn * 7} tokens?`
                    );
                    const fedBack = usage.completionTokens - (finishReason === "length" ? 1 : 0);
                    expect(usage.evaluatedPromptTokens + usage.cachedPromptTokens).toBe(usage.promptTokens);
                    expect(meter() - before, `${conversation.workspace}, turn ${turn}`).toBe(usage.evaluatedPromptTokens + fedBack);
                    const held = service.snapshot().workspaces.find((usage) => usage.workspace === conversation.workspace);
                    expect(held?.heldTokens, `${conversation.workspace}, turn ${turn}`).toBe(usage.promptTokens + fedBack);
                    if (turn > 0 && memory.paged) {
                        expect(usage.cachedPromptTokens, "swapped in, not recomputed").toBeGreaterThan(0);
                    }
                }
            }
            for (const conversation of conversations) {
                await service.forgetWorkspace(conversation.workspace);
            }
            await expectEngineClean(engine);
        });
    });
}
