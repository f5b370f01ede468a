// The GGUF header fuzz run, in a process of its own with a small V8 heap (started by
// readGgufHeaderFuzz.test.ts): `node --max-old-space-size=64 --expose-gc --import tsx
// fuzzGgufHeaderChild.ts <seed> <runs> <dir>`. A reader that allocates what a header claims dies
// here of the heap limit (or "invalid size"), which the test sees as a crash. Each case must end in
// a valid header or a typed model error, and (measured on every 20th) keep no more than a fixed budget of heap. Prints one
// JSON line of counts on success; fast-check's counterexample (with its seed and path) on failure.
import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { KvaultError } from "../../../engine/core/KvaultError.js";
import { readGgufHeader, type GgufHeader } from "../../../gguf/readGgufHeader.js";
import { ggufFile } from "./ggufFuzzCases.js";
import { T, ggufStart } from "./rawGguf.js";

/** Heap a finished case may keep (its result included): files here are at most a few KB. */
export const RETAINED_BUDGET_BYTES = 4 * 1024 * 1024;
const CODES = new Set(["model_unreadable", "model_not_gguf", "model_unsupported"]);

const [seedText, runsText, directory] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined || directory === undefined) {
    process.stderr.write("run with --expose-gc and <seed> <runs> <dir>\n");
    process.exit(2);
}
const filePath = path.join(directory, "case.gguf");
const outcomes: Record<string, number> = { valid: 0 };

// The two files that took node-llama-cpp's reader down, first: one array claiming 2^40
// elements, and a header claiming 2^62 entries.
const examples: [Buffer, number][] = [
    [
        ggufStart({ entries: 1 })
            .entry("tokenizer.ggml.tokens", T.array, (raw) => raw.u32(T.u32).u64(2n ** 40n))
            .build(),
        65_536
    ],
    [ggufStart({ entries: 2n ** 62n }).build(), 65_536]
];
/** Every this many cases, and for the examples, the retained heap is measured between two full collections (each costs about 20 ms). */
const MEASURE_EVERY = 20;
let numCases = 0;

function check(bytes: Buffer, chunkBytes: number): void {
    fs.writeFileSync(filePath, bytes);
    const measure = numCases++ % MEASURE_EVERY === 0 || numCases <= examples.length;
    if (measure) {
        gc!();
    }
    const before = process.memoryUsage();
    let header: GgufHeader | undefined;
    try {
        header = readGgufHeader(filePath, { maxHeaderBytes: 1024 * 1024, chunkBytes });
    } catch (error) {
        if (!(error instanceof KvaultError) || !CODES.has(error.code)) {
            throw new Error(`not a typed model error: ${(error as Error).stack ?? String(error)}`);
        }
        if (!error.message.includes(filePath)) {
            throw new Error(`the message does not name the file: ${error.message}`);
        }
        outcomes[error.code] = (outcomes[error.code] ?? 0) + 1;
    }
    if (header !== undefined) {
        outcomes.valid!++;
        for (const tensor of header.tensors) {
            if (tensor.fileOffset + tensor.numBytes > bytes.length || tensor.fileOffset < header.dataOffset) {
                throw new Error(`tensor ${tensor.name} lies outside the file: ${JSON.stringify({ ...tensor, fileBytes: bytes.length })}`);
            }
        }
    }
    if (!measure) {
        return;
    }
    gc!();
    const after = process.memoryUsage();
    const retained = after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers);
    if (retained > RETAINED_BUDGET_BYTES) {
        throw new Error(`a ${bytes.length}-byte file kept ${retained} bytes of heap (budget ${RETAINED_BUDGET_BYTES})`);
    }
    void header; // kept alive to here, so it counts
}

fc.assert(
    fc.property(ggufFile, fc.constantFrom(1, 7, 64, 65_536), (bytes, chunkBytes) => check(bytes, chunkBytes)),
    { seed: Number(seedText), numRuns: Number(runsText), examples }
);
process.stdout.write(`${JSON.stringify({ ...outcomes, peakRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
