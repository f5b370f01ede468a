import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaModel } from "node-llama-cpp";
import { bytesPerToken } from "../../../engine/codec/KvLayout.js";
import { parseSequenceState, parseSequenceStateMeta } from "../../../engine/codec/parseSequenceState.js";
import {
    assembleSequenceStateChunks,
    bufferPageAccess,
    numPagesFor,
    planStateTarget,
    scatterStateToPages
} from "../../../engine/codec/statePages.js";
import { pageChecksum } from "../../../engine/pages/pageChecksum.js";
import type { SequenceSlot } from "../../../engine/runtime/SequenceSlot.js";
import { inMemoryStateUnsupported } from "../../../engine/runtime/addonPatch/sequenceStateInMemory.js";
import { FileStateExchange } from "../../../engine/runtime/FileStateExchange.js";
import { LlamaRoleContext } from "../../../engine/runtime/LlamaRoleContext.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { MemoryStateExchange } from "../../../engine/runtime/MemoryStateExchange.js";
import { PrivateStateDirectory } from "../../../engine/runtime/PrivateStateDirectory.js";
import { SequenceStateError } from "../../../engine/runtime/sequenceStateErrors.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { greedyTokens } from "../../support/greedyTokens.js";
import { splitStateAsWritten } from "../../support/splitStateAsWritten.js";

// The patched addon's in-memory state methods (engine/runtime/addonPatch/AddonContextStateBuffers.cpp)
// in the local build `npm run build-llama` makes (test/e2e's global setup makes one), against
// llama.cpp's own state files from the same binary: the same bytes out, the same KV in.

const PAGE_TOKENS = 16;
const PROMPT = "A state saved into memory is the state file's bytes, and a state loaded from pages continues as the original.";

describe("states through memory in Kvault's patched local build, against llama.cpp's state files", () => {
    let runtime: LlamaRuntime;
    let model: LlamaModel;
    let directory: PrivateStateDirectory;
    const contexts: LlamaRoleContext[] = [];
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        model = await runtime.loadModel(generatedModelPath("tiny"));
        directory = PrivateStateDirectory.create();
    });
    afterAll(async () => {
        for (const context of contexts.splice(0)) {
            await context.dispose();
        }
        expect(directory.listFiles()).toEqual([]);
        directory.dispose();
        await model.dispose();
        await runtime.dispose();
    });

    async function context(exchange: "memory" | "file", numSequences: number, flashAttention: boolean): Promise<LlamaRoleContext> {
        const created = await LlamaRoleContext.create(
            model,
            { role: "decode", contextSize: 256, numSequences, flashAttention },
            exchange === "memory" ? new MemoryStateExchange() : new FileStateExchange(directory)
        );
        contexts.push(created);
        return created;
    }

    it("runs on the local build, whose addon carries the in-memory state methods", () => {
        expect(runtime.binary, "npm run build-llama's build (the e2e global setup makes it)").toEqual({
            kind: "localBuild",
            flavor: "native"
        });
        expect(inMemoryStateUnsupported(runtime.llama)).toBeUndefined();
    });

    describe.each([
        { name: "V transposed (no flash attention)", flashAttention: false },
        { name: "V in rows (flash attention)", flashAttention: true }
    ])("$name", ({ flashAttention }) => {
        it.each([1, 17, 47])(
            "saves a %i-token sequence as the state file's very bytes, and loads it from pages to continue as a fresh run",
            async (numPrefill) => {
                const tokens = model.tokenize(PROMPT.repeat(3)).slice(0, numPrefill + 1);
                expect(tokens).toHaveLength(numPrefill + 1);
                const throughMemory = await context("memory", 1, flashAttention);
                const throughFiles = await context("file", 1, flashAttention);
                const decode = await context("memory", 3, flashAttention);

                const source = throughMemory.acquireSequence()!;
                await throughMemory.evaluate(source, tokens.slice(0, numPrefill));
                const inMemory = await throughMemory.exportState(source, "memory");
                const fileSource = throughFiles.acquireSequence()!;
                await throughFiles.evaluate(fileSource, tokens.slice(0, numPrefill));
                const asFile = await throughFiles.exportState(fileSource, "file");
                expect(inMemory.bytes.length).toBe(asFile.bytes.length);
                expect(inMemory.bytes.equals(asFile.bytes)).toBe(true);
                expect(inMemory.numCells).toBe(numPrefill);

                // through pages, re-framed for the 3-stream context, loaded from views of the pages into its last sequence
                const pages = Array.from({ length: numPagesFor(numPrefill, PAGE_TOKENS) }, () =>
                    Buffer.alloc(PAGE_TOKENS * bytesPerToken(inMemory.layout))
                );
                scatterStateToPages(inMemory, bufferPageAccess(pages), PAGE_TOKENS);
                inMemory.release();
                expect(inMemory.bytes.length).toBe(0);
                const slots = [decode.acquireSequence()!, decode.acquireSequence()!, decode.acquireSequence()!];
                const chunks = assembleSequenceStateChunks({
                    tokens: tokens.slice(0, numPrefill),
                    layout: throughMemory.layout!,
                    targetLayout: decode.layout!,
                    targetNumStreams: decode.numStreams!,
                    pages: bufferPageAccess(pages),
                    pageTokens: PAGE_TOKENS
                });
                expect(chunks.chunks.length).toBeGreaterThan(1);
                await decode.importState(slots[2]!, chunks, "pages");
                expect(slots[2]!.tokens).toEqual(tokens.slice(0, numPrefill));
                const handedOff = await greedyTokens(slots[2]!, [tokens[numPrefill]!], 12);
                const recomputed = await greedyTokens(slots[0]!, tokens, 12);
                expect(handedOff).toEqual(recomputed);
                for (const slot of slots) {
                    await decode.releaseSequence(slot);
                }
            }
        );

        it("loads from pages verifying each as llama.cpp reads it: intact, it continues as a fresh run; a byte changed, the sequence is left empty and the page named", async () => {
            const numPrefill = 40; // pages of 16, 16 and 8 positions
            const tokens = model.tokenize(PROMPT.repeat(3)).slice(0, numPrefill + 1);
            const source = await context("memory", 1, flashAttention);
            const decode = await context("memory", 2, flashAttention);
            const sourceSlot = source.acquireSequence()!;
            await source.evaluate(sourceSlot, tokens.slice(0, numPrefill));
            const saved = await source.exportState(sourceSlot, "memory");
            const pages = Array.from({ length: numPagesFor(numPrefill, PAGE_TOKENS) }, () =>
                Buffer.alloc(PAGE_TOKENS * bytesPerToken(saved.layout))
            );
            scatterStateToPages(saved, bufferPageAccess(pages), PAGE_TOKENS);
            saved.release();
            // each page's valid length, as the pool records it for a state saved into pages
            const validLengths = planStateTarget(numPrefill, source.layout!, source.numStreams!, PAGE_TOKENS, (page, offset, numBytes) =>
                pages[page]!.subarray(offset, offset + numBytes)
            ).numValidBytesByPage;
            expect(validLengths[2]).toBeLessThan(pages[2]!.length);
            // the pages' checksums as they were sealed, before any byte changes
            const views = pages.map((page, index) => page.subarray(0, validLengths[index]));
            const sealed = BigUint64Array.from(views, (view, index) => pageChecksum(view, index * PAGE_TOKENS));
            const loadFrom = async (slot: SequenceSlot) => {
                const state = assembleSequenceStateChunks({
                    tokens: tokens.slice(0, numPrefill),
                    layout: source.layout!,
                    targetLayout: decode.layout!,
                    targetNumStreams: decode.numStreams!,
                    pages: bufferPageAccess(pages),
                    pageTokens: PAGE_TOKENS
                });
                const pageChecks = {
                    chunkPages: state.chunkPages,
                    pages: views,
                    seeds: BigUint64Array.from(views, (_, index) => BigInt(index * PAGE_TOKENS)),
                    expected: sealed,
                    recomputed: new BigUint64Array(views.length)
                };
                await decode.importState(slot, { ...state, pageChecks }, "verified");
                return pageChecks;
            };
            const [intact, reference] = [decode.acquireSequence()!, decode.acquireSequence()!];
            const checks = await loadFrom(intact);
            expect(Array.from(checks.recomputed)).toEqual(Array.from(checks.expected));
            expect(intact.tokens).toEqual(tokens.slice(0, numPrefill));
            expect(await greedyTokens(intact, [tokens[numPrefill]!], 8)).toEqual(await greedyTokens(reference, tokens, 8));
            await decode.clearSequence(intact);

            // a byte of the second page's V rows changed after the checksums were taken: nothing of the state stays
            pages[1]![pages[1]!.length - 5]! ^= 0x40;
            const refused = await loadFrom(intact);
            expect(refused.recomputed[0]).toBe(refused.expected[0]);
            expect(refused.recomputed[1]).not.toBe(refused.expected[1]);
            expect(intact.numTokens).toBe(0);
            // the sequence is as empty as a fresh one: the same tokens evaluated afresh give the source's own continuation
            await decode.clearSequence(reference);
            await decode.evaluate(intact, tokens.slice(0, numPrefill));
            expect(await greedyTokens(intact, [tokens[numPrefill]!], 8)).toEqual(await greedyTokens(reference, tokens, 8));
            for (const slot of [intact, reference]) {
                await decode.releaseSequence(slot);
            }
            await source.releaseSequence(sourceSlot);
        });
    });

    describe.each([
        { name: "V transposed (no flash attention)", flashAttention: false },
        { name: "V in rows (flash attention)", flashAttention: true }
    ])("saved straight into pages, $name", ({ flashAttention }) => {
        it.each([1, 17, 47])(
            "puts a %i-token sequence's KV where a whole save scattered puts it, byte for byte, and its metadata apart",
            async (numPrefill) => {
                const tokens = model.tokenize(PROMPT.repeat(3)).slice(0, numPrefill);
                const source = await context("memory", 3, flashAttention);
                const slots = [source.acquireSequence()!, source.acquireSequence()!, source.acquireSequence()!];
                await source.evaluate(slots[0]!, tokens.slice(0, 5)); // another sequence's KV beside it, in another stream
                await source.evaluate(slots[2]!, tokens);
                const layout = source.layout!;
                const pageBytes = PAGE_TOKENS * bytesPerToken(layout);
                const numPages = numPagesFor(numPrefill, PAGE_TOKENS);

                const whole = await source.exportState(slots[2]!, "whole");
                const scattered = Array.from({ length: numPages }, () => Buffer.alloc(pageBytes));
                scatterStateToPages(whole, bufferPageAccess(scattered), PAGE_TOKENS);
                const wholeBytes = Buffer.from(whole.bytes);
                whole.release();

                // the engine's pages are shared memory (the hashing threads read them in place)
                const arena = Buffer.from(new SharedArrayBuffer(numPages * pageBytes));
                const planned = planStateTarget(numPrefill, layout, source.numStreams!, PAGE_TOKENS, (page, offset, numBytes) =>
                    arena.subarray(page * pageBytes + offset, page * pageBytes + offset + numBytes)
                );
                // each page hashed as llama.cpp writes it, seeded as the pool seeds it (here at positions from 4,096 on)
                const pages = planned.numValidBytesByPage.map((numBytes, page) =>
                    arena.subarray(page * pageBytes, page * pageBytes + numBytes)
                );
                const seeds = BigUint64Array.from(pages, (_, page) => BigInt(4096 + page * PAGE_TOKENS));
                const target = { ...planned, pageHashes: { pages, seeds, checksums: new BigUint64Array(numPages) } };
                expect(target.numBytes).toBe(wholeBytes.length);
                expect(await source.saveStateInto!(slots[2]!, target)).toBe(true);
                expect(Buffer.concat(scattered).equals(arena)).toBe(true);
                expect(Array.from(target.pageHashes.checksums)).toEqual(
                    pages.map((page, index) => pageChecksum(page, 4096 + index * PAGE_TOKENS))
                );
                expect(new Set(target.pageHashes.checksums).size).toBe(numPages);
                if (numPages > 1) {
                    // a run said to lie in a page it is not in: refused before llama.cpp writes a byte
                    const misnamed = { ...target, runPages: new Uint32Array(target.runs.length) };
                    await expect(source.saveStateInto!(slots[2]!, misnamed)).rejects.toThrow(/each run inside the page it names/);
                }
                expect(target.meta.equals(splitStateAsWritten(wholeBytes).meta)).toBe(true);
                const meta = parseSequenceStateMeta(target.meta);
                expect(Array.from(meta.tokens)).toEqual(tokens);
                expect(meta.numStreams).toBe(3);

                // a plan for another token count: nothing written, and the caller told so
                const other = Buffer.from(new SharedArrayBuffer(numPagesFor(numPrefill + 1, PAGE_TOKENS) * pageBytes));
                const otherTarget = planStateTarget(numPrefill + 1, layout, source.numStreams!, PAGE_TOKENS, (page, offset, numBytes) =>
                    other.subarray(page * pageBytes + offset, page * pageBytes + offset + numBytes)
                );
                expect(await source.saveStateInto!(slots[2]!, otherTarget)).toBe(false);
                expect(other.every((byte) => byte === 0)).toBe(true);
                expect(otherTarget.meta.every((byte) => byte === 0)).toBe(true);
                for (const slot of slots) {
                    await source.releaseSequence(slot);
                }
            }
        );
    });

    it("refuses a state with a wrong magic, a short one, and one with bytes past its end, each a SequenceStateError that leaves no cell behind", async () => {
        const source = await context("memory", 1, true);
        const target = await context("memory", 1, true);
        const tokens = model.tokenize(PROMPT).slice(0, 20);
        const slot = source.acquireSequence()!;
        await source.evaluate(slot, tokens);
        const saved = await source.exportState(slot, "good");
        const good = Buffer.from(saved.bytes);
        saved.release();
        const into = target.acquireSequence()!;

        const wrongMagic = Buffer.from(good);
        wrongMagic.writeUInt32LE(0x12345678, 0);
        const shortOne = good.subarray(0, good.length - 100);
        const withTrailing = Buffer.concat([good, Buffer.from([1, 2, 3, 4])]);
        const refusals: [Buffer, RegExp][] = [
            [wrongMagic, /the state's magic and version are 0x12345678 and \d+, not 0x67677371/],
            [shortOne, /llama\.cpp refused the state: /],
            [withTrailing, new RegExp(`llama\\.cpp read ${good.length} of the state's ${good.length + 4} bytes`)]
        ];
        for (const [state, reason] of refusals) {
            const error = await target.importState(into, state, "bad").catch((caught: unknown) => caught);
            expect(error).toBeInstanceOf(SequenceStateError);
            expect((error as Error).message).toMatch(reason);
            expect(into.numTokens).toBe(0);
            // no cell of the refused state is left: the same tokens evaluated afresh give the source's very state
            await target.evaluate(into, tokens);
            const afresh = await target.exportState(into, "afresh");
            expect(afresh.bytes.equals(good)).toBe(true);
            afresh.release();
            await target.clearSequence(into);
        }
        // the good one still loads into the same sequence, and holds what the source held
        await target.importState(into, good, "good");
        expect(into.tokens).toEqual(tokens);
        const back = await target.exportState(into, "back");
        expect(parseSequenceState(back.bytes).numCells).toBe(tokens.length);
        expect(back.bytes.equals(good)).toBe(true);
    });
});
