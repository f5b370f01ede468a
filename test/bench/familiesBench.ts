import fs from "node:fs";
import type { LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import { workspaceId } from "../../engine/core/ids.js";
import { KvEngine } from "../../engine/KvEngine.js";
import {
    familyPresetNames,
    familyPresets,
    modelFamilies,
    type FamilyPresetName,
    type ModelFamily
} from "../../synthetic/model/familyPresets.js";
import { isModelQuant, quantTraits, type ModelQuant } from "../../synthetic/model/modelQuantization.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { ensureFamilyModel } from "../support/generatedModels.js";
import { BENCH_GPU, BENCH_THREADS, benchEngineConfig, PROMPT_TEXT, repetitionsFromEnvironment } from "./benchPrompt.js";
import { formatBytes, formatNumber, median, printTable, TokenClock, type Benchmark, type BenchFigures } from "./benchUtils.js";

const PROMPT_LENGTH = 512;
const NUM_GENERATED = 64;
const PAGE_TOKENS = 256;
const CONTEXT_SIZE = Math.ceil((PROMPT_LENGTH + NUM_GENERATED) / PAGE_TOKENS) * PAGE_TOKENS;
const NUM_REPETITIONS = repetitionsFromEnvironment(3);

/**
 * What to run, from the environment: KVAULT_BENCH_FAMILIES (comma-separated, default all six),
 * KVAULT_BENCH_QUANTS (default q4_0,q8_0), KVAULT_BENCH_FAMILY_SIZE ("bench", the ~0.5–1B presets,
 * by default; "tiny" for a quick run that only shows the benchmark works).
 */
function selection(): { readonly presets: readonly FamilyPresetName[]; readonly quants: readonly ModelQuant[] } {
    const families = (process.env.KVAULT_BENCH_FAMILIES ?? Object.keys(modelFamilies).join(",")).split(",").map((name) => name.trim());
    const unknownFamily = families.find((name) => !Object.hasOwn(modelFamilies, name));
    if (unknownFamily !== undefined) {
        throw new RangeError(`KVAULT_BENCH_FAMILIES names ${unknownFamily}; the families are ${Object.keys(modelFamilies).join(", ")}.`);
    }
    const quants = (process.env.KVAULT_BENCH_QUANTS ?? "q4_0,q8_0").split(",").map((name) => name.trim());
    const unknownQuant = quants.find((name) => !isModelQuant(name));
    if (unknownQuant !== undefined) {
        throw new RangeError(`KVAULT_BENCH_QUANTS names ${unknownQuant}; use f16, q8_0, q4_0 or q4_k.`);
    }
    const size = process.env.KVAULT_BENCH_FAMILY_SIZE ?? "bench";
    if (size !== "bench" && size !== "tiny") {
        throw new RangeError(`KVAULT_BENCH_FAMILY_SIZE is ${size}; use bench (the ~0.5–1B presets) or tiny.`);
    }
    const presets = (families as ModelFamily[]).map(
        (family) => familyPresetNames.find((name) => familyPresets[name].family === family && name.endsWith("-tiny") === (size === "tiny"))!
    );
    return { presets, quants: quants as ModelQuant[] };
}

/** Exactly `length` tokens: BOS where the model has one, then the prompt text's tokens repeated. */
function promptOfLength(model: LlamaModel, length: number): Token[] {
    const body = model.tokenize(PROMPT_TEXT);
    const tokens: Token[] = model.tokens.bos === null ? [] : [model.tokens.bos];
    for (let index = 0; tokens.length < length; index++) {
        tokens.push(body[index % body.length]!);
    }
    return tokens;
}

interface Sample {
    /** Prompt tokens ÷ time from the call to the first token: prefill as the caller sees it (the engine's includes its handoff). */
    readonly prefillTokensPerSecond: number;
    /** Tokens after the first ÷ time from the first to the last. */
    readonly decodeTokensPerSecond: number;
    readonly tokens: readonly number[];
}

/** The caller's view of one run: prefill until the first token (the engine's includes its handoff), then decode. */
function sampleOf(clock: TokenClock, numPromptTokens: number): Sample {
    return {
        prefillTokensPerSecond: numPromptTokens / (clock.timeToFirstTokenMs / 1000),
        decodeTokensPerSecond: clock.decodeTokensPerSecond,
        tokens: clock.tokens
    };
}

async function runBare(model: LlamaModel, sequence: LlamaContextSequence, prompt: Token[]): Promise<Sample> {
    const clock = new TokenClock();
    try {
        for await (const token of sequence.evaluate(prompt, { temperature: 0 })) {
            if (model.isEogToken(token)) {
                break;
            }
            clock.onToken(token);
            if (clock.tokens.length >= NUM_GENERATED) {
                break;
            }
        }
    } finally {
        await sequence.clearHistory();
    }
    return sampleOf(clock, prompt.length);
}

let nextWorkspace = 0;

async function runEngine(engine: KvEngine, prompt: readonly number[]): Promise<Sample> {
    const workspace = workspaceId(`bench-families-${nextWorkspace++}`);
    const clock = new TokenClock();
    try {
        await engine.generate({ workspace, promptTokens: prompt, maxTokens: NUM_GENERATED, onToken: (token) => clock.onToken(token) });
    } finally {
        await engine.forgetWorkspace(workspace);
    }
    return sampleOf(clock, prompt.length);
}

interface Row {
    readonly preset: FamilyPresetName;
    readonly quant: string;
    readonly fileBytes: number;
    readonly arm: "bare" | "engine";
    /** The engine's mode: split, or unified with its reason. */
    readonly mode: string;
    readonly prefillTokensPerSecond: number;
    readonly decodeTokensPerSecond: number;
    readonly decodeRatioToBare: number;
    readonly prefillRatioToBare: number;
    readonly sameTokensAsBare: boolean;
}

async function benchOne(runtime: LlamaRuntime, preset: FamilyPresetName, quant: ModelQuant): Promise<Row[]> {
    const modelPath = ensureFamilyModel(preset, quant);
    const cleanup: (() => Promise<void>)[] = [];
    try {
        const model = await runtime.loadModel(modelPath);
        cleanup.unshift(() => model.dispose());
        const context = await model.createContext({
            contextSize: CONTEXT_SIZE,
            sequences: 1,
            flashAttention: true,
            threads: BENCH_THREADS
        });
        cleanup.unshift(() => context.dispose());
        const sequence = context.getSequence();
        const engine = await KvEngine.start(benchEngineConfig(modelPath, CONTEXT_SIZE, PAGE_TOKENS), { runtime });
        cleanup.unshift(() => engine.dispose());
        const prompt = promptOfLength(model, PROMPT_LENGTH);

        const arms = ["bare", "engine"] as const;
        const run = (arm: (typeof arms)[number]): Promise<Sample> =>
            arm === "bare" ? runBare(model, sequence, prompt) : runEngine(engine, prompt);
        for (const arm of arms) {
            await run(arm); // warm-up, not measured
        }
        const samples = { bare: [] as Sample[], engine: [] as Sample[] };
        for (let repetition = 0; repetition < NUM_REPETITIONS; repetition++) {
            for (const arm of repetition % 2 === 0 ? arms : [...arms].reverse()) {
                samples[arm].push(await run(arm));
            }
        }
        const bareDecode = median(samples.bare.map((sample) => sample.decodeTokensPerSecond));
        const barePrefill = median(samples.bare.map((sample) => sample.prefillTokensPerSecond));
        const bareTokens = samples.bare[0]!.tokens;
        const mode = engine.mode.effective === "split" ? "split" : `unified (${engine.mode.reason ?? "asked for"})`;
        return arms.map((arm) => {
            const decode = median(samples[arm].map((sample) => sample.decodeTokensPerSecond));
            const prefill = median(samples[arm].map((sample) => sample.prefillTokensPerSecond));
            return {
                preset,
                quant: quantTraits[quant].label,
                fileBytes: fs.statSync(modelPath).size,
                arm,
                mode: arm === "bare" ? "—" : mode,
                prefillTokensPerSecond: prefill,
                decodeTokensPerSecond: decode,
                decodeRatioToBare: decode / bareDecode,
                prefillRatioToBare: prefill / barePrefill,
                sameTokensAsBare: samples[arm].every((sample) => sample.tokens.join() === bareTokens.join())
            };
        });
    } finally {
        for (const step of cleanup) {
            await step();
        }
    }
}

export const familiesBench: Benchmark = {
    name: "families",
    description:
        "Prefill and decode tokens/s per model family (~0.5–1B presets) in Q4_0 and Q8_0, engine against bare node-llama-cpp on the same file",
    async run(): Promise<BenchFigures> {
        const { presets, quants } = selection();
        const runtime = await LlamaRuntime.start({ gpu: BENCH_GPU, maxThreads: BENCH_THREADS });
        try {
            console.log(`runtime: ${runtime.describe()}; presets ${presets.join(", ")}; ${quants.join(", ")}`);
            const rows: Row[] = [];
            for (const preset of presets) {
                for (const quant of quants) {
                    const startedAt = performance.now();
                    rows.push(...(await benchOne(runtime, preset, quant)));
                    console.log(`  ${preset} ${quant}: ${formatNumber((performance.now() - startedAt) / 1000, 1)} s`);
                }
            }
            printTable(
                `Families: prompt ${PROMPT_LENGTH} tok, ${NUM_GENERATED} generated, median of ${NUM_REPETITIONS} (${runtime.describe()})`,
                [
                    { header: "preset", cell: (row: Row) => row.preset, align: "left" },
                    { header: "quant", cell: (row) => row.quant, align: "left" },
                    { header: "file", cell: (row) => formatBytes(row.fileBytes) },
                    { header: "arm", cell: (row) => row.arm, align: "left" },
                    { header: "prefill", cell: (row) => `${formatNumber(row.prefillTokensPerSecond, 0)} tok/s` },
                    { header: "÷ bare", cell: (row) => `${formatNumber(100 * row.prefillRatioToBare, 1)} %` },
                    { header: "decode", cell: (row) => `${formatNumber(row.decodeTokensPerSecond, 1)} tok/s` },
                    { header: "÷ bare", cell: (row) => `${formatNumber(100 * row.decodeRatioToBare, 1)} %` },
                    { header: "same tokens", cell: (row) => (row.sameTokensAsBare ? "yes" : "no") },
                    { header: "mode", cell: (row) => row.mode, align: "left" }
                ],
                rows
            );
            console.log(
                "prefill: prompt tokens ÷ time from the call to the first token (the engine's includes prefill, handoff through pages and " +
                    "the last prompt token in decode). decode: tokens after the first ÷ time from the first to the last. Both arms use " +
                    "flash attention, whose CPU rounding depends on the batch: 'same tokens' can say no where the split engine's tokens " +
                    "leave bare's at a near-tie, without anything wrong."
            );
            return {
                backend: runtime.describe(),
                threads: BENCH_THREADS,
                contextSize: CONTEXT_SIZE,
                promptTokens: PROMPT_LENGTH,
                numGenerated: NUM_GENERATED,
                numRepetitions: NUM_REPETITIONS,
                unit: "tokens/s",
                rows
            };
        } finally {
            await runtime.dispose();
        }
    }
};
