import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaModel } from "node-llama-cpp";
import { StateFormatError, StateLayoutMismatchError } from "../../engine/codec/codecErrors.js";
import { bytesPerToken } from "../../engine/codec/KvLayout.js";
import { parseSequenceState } from "../../engine/codec/parseSequenceState.js";
import { assembleSequenceState, bufferPageAccess, numPagesFor, scatterStateToPages } from "../../engine/codec/statePages.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { PrivateStateDirectory } from "../../engine/runtime/PrivateStateDirectory.js";
import { FileStateExchange } from "../../engine/runtime/FileStateExchange.js";
import { LlamaRoleContext } from "../../engine/runtime/LlamaRoleContext.js";
import { generatedModelPath } from "../support/generatedModels.js";
import { greedyTokens } from "../support/greedyTokens.js";

const PAGE_TOKENS = 16;
const PROMPT = "Pages hold the real KV bytes of one sequence. The codec moves them between contexts, and nothing else.";

describe("the KV codec on real node-llama-cpp states of the tiny model", () => {
    let runtime: LlamaRuntime;
    let model: LlamaModel;
    let stateDirectory: PrivateStateDirectory;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        model = await runtime.loadModel(generatedModelPath("tiny"));
        stateDirectory = PrivateStateDirectory.create();
    });
    afterAll(async () => {
        expect(stateDirectory.listFiles()).toEqual([]);
        stateDirectory.dispose();
        await model.dispose();
        await runtime.dispose();
    });

    describe.each([
        { name: "V transposed (no flash attention)", flashAttention: false },
        { name: "V in rows (flash attention)", flashAttention: true }
    ])("$name", ({ flashAttention }) => {
        it.each([1, 15, 16, 17, 33, 47])(
            "moves a %i-token prompt through pages into a 3-sequence context and continues exactly as a fresh run",
            async (numPrefill) => {
                const tokens = model.tokenize(PROMPT.repeat(3)).slice(0, numPrefill + 1);
                expect(tokens).toHaveLength(numPrefill + 1);
                const prefill = await LlamaRoleContext.create(
                    model,
                    { role: "prefill", contextSize: 256, numSequences: 1, flashAttention },
                    new FileStateExchange(stateDirectory)
                );
                const decode = await LlamaRoleContext.create(
                    model,
                    { role: "decode", contextSize: 256, numSequences: 3, flashAttention },
                    new FileStateExchange(stateDirectory)
                );
                try {
                    expect(prefill.numStreams).toBe(1);
                    expect(decode.numStreams).toBe(3);
                    expect(decode.layout).toEqual(prefill.layout);

                    const source = prefill.acquireSequence()!;
                    await prefill.evaluate(source, tokens.slice(0, numPrefill));
                    const exported = await prefill.exportState(source, "test");
                    expect(exported.numCells).toBe(numPrefill);
                    expect(exported.layout.vTransposed).toBe(!flashAttention);

                    const pageBytes = PAGE_TOKENS * bytesPerToken(exported.layout);
                    const pages = Array.from({ length: numPagesFor(numPrefill, PAGE_TOKENS) }, () => Buffer.alloc(pageBytes));
                    scatterStateToPages(exported, bufferPageAccess(pages), PAGE_TOKENS);

                    // Same framing: the pages give back the very bytes llama.cpp wrote.
                    const sameFraming = assembleSequenceState({
                        tokens: exported.tokens,
                        layout: exported.layout,
                        targetLayout: prefill.layout!,
                        targetNumStreams: prefill.numStreams!,
                        pages: bufferPageAccess(pages),
                        pageTokens: PAGE_TOKENS
                    });
                    expect(sameFraming.equals(exported.bytes)).toBe(true);

                    // Re-framed for the 3-stream decode context, loaded into its last sequence.
                    const decodeSequences = [decode.acquireSequence()!, decode.acquireSequence()!, decode.acquireSequence()!];
                    const target = decodeSequences[2]!;
                    const reframed = assembleSequenceState({
                        tokens: exported.tokens,
                        layout: exported.layout,
                        targetLayout: decode.layout!,
                        targetNumStreams: decode.numStreams!,
                        pages: bufferPageAccess(pages),
                        pageTokens: PAGE_TOKENS
                    });
                    await decode.importState(target, reframed, "test");
                    expect(target.tokens).toEqual(tokens.slice(0, numPrefill));
                    const handedOff = await greedyTokens(target, [tokens[numPrefill]!], 12);

                    const fresh = decodeSequences[0]!;
                    const recomputed = await greedyTokens(fresh, tokens, 12);
                    expect(handedOff).toEqual(recomputed);
                    for (const sequence of decodeSequences) {
                        await decode.releaseSequence(sequence);
                    }
                } finally {
                    await prefill.dispose();
                    await decode.dispose();
                }
            }
        );
    });

    it("refuses a state whose V layout differs from the target's, before anything is loaded", async () => {
        const rows = await LlamaRoleContext.create(
            model,
            { role: "prefill", contextSize: 256, numSequences: 1, flashAttention: true },
            new FileStateExchange(stateDirectory)
        );
        const transposed = await LlamaRoleContext.create(
            model,
            { role: "decode", contextSize: 256, numSequences: 1, flashAttention: false },
            new FileStateExchange(stateDirectory)
        );
        try {
            const source = rows.acquireSequence()!;
            await rows.evaluate(source, model.tokenize(PROMPT));
            const exported = await rows.exportState(source, "test");
            const pages = Array.from({ length: numPagesFor(exported.numCells, PAGE_TOKENS) }, () =>
                Buffer.alloc(PAGE_TOKENS * bytesPerToken(exported.layout))
            );
            scatterStateToPages(exported, bufferPageAccess(pages), PAGE_TOKENS);
            expect(() =>
                assembleSequenceState({
                    tokens: exported.tokens,
                    layout: exported.layout,
                    targetLayout: transposed.layout!,
                    targetNumStreams: 1,
                    pages: bufferPageAccess(pages),
                    pageTokens: PAGE_TOKENS
                })
            ).toThrow(StateLayoutMismatchError);
        } finally {
            await rows.dispose();
            await transposed.dispose();
        }
    });

    it("refuses a state of another model (small into tiny) by its geometry", async () => {
        const small = await runtime.loadModel(generatedModelPath("small"));
        const tinyContext = await LlamaRoleContext.create(
            model,
            { role: "decode", contextSize: 256, numSequences: 1, flashAttention: true },
            new FileStateExchange(stateDirectory)
        );
        const smallContext = await LlamaRoleContext.create(
            small,
            { role: "prefill", contextSize: 256, numSequences: 1, flashAttention: true },
            new FileStateExchange(stateDirectory)
        );
        try {
            const source = smallContext.acquireSequence()!;
            await smallContext.evaluate(source, small.tokenize(PROMPT));
            const exported = await smallContext.exportState(source, "test");
            const pages = Array.from({ length: numPagesFor(exported.numCells, PAGE_TOKENS) }, () =>
                Buffer.alloc(PAGE_TOKENS * bytesPerToken(exported.layout))
            );
            scatterStateToPages(exported, bufferPageAccess(pages), PAGE_TOKENS);
            expect(() =>
                assembleSequenceState({
                    tokens: exported.tokens,
                    layout: exported.layout,
                    targetLayout: tinyContext.layout!,
                    targetNumStreams: 1,
                    pages: bufferPageAccess(pages),
                    pageTokens: PAGE_TOKENS
                })
            ).toThrow(/12 layers, the context has 2/);
        } finally {
            await tinyContext.dispose();
            await smallContext.dispose();
            await small.dispose();
        }
    });

    it("refuses a state truncated at every section boundary, and one byte either side, with a typed error", async () => {
        const context = await LlamaRoleContext.create(
            model,
            { role: "prefill", contextSize: 256, numSequences: 2, flashAttention: false },
            new FileStateExchange(stateDirectory)
        );
        try {
            const source = context.acquireSequence()!;
            await context.evaluate(source, model.tokenize(PROMPT));
            const { bytes, sectionOffsets } = await context.exportState(source, "test");
            expect(sectionOffsets.length).toBeGreaterThan(8); // header, tokens, streams, cells, meta, V flag, 2×K, 2×V
            const cuts = new Set<number>();
            for (const boundary of sectionOffsets) {
                for (const cut of [boundary - 1, boundary, boundary + 1]) {
                    if (cut >= 0 && cut < bytes.length) {
                        cuts.add(cut);
                    }
                }
            }
            cuts.add(bytes.length - 1);
            for (const cut of cuts) {
                expect(() => parseSequenceState(bytes.subarray(0, cut)), `cut at ${cut}`).toThrow(StateFormatError);
            }
            expect(() => parseSequenceState(Buffer.concat([bytes, Buffer.alloc(1)]))).toThrow(/1 bytes follow the end/);
            expect(parseSequenceState(bytes).numCells).toBeGreaterThan(0);
        } finally {
            await context.dispose();
        }
    });
});
