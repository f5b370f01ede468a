// `npm run bench -- grammar`: what one token held to a JSON schema's grammar costs as the
// alternatives it keeps open grow, on a family preset's real vocabulary (llama3-tiny: 128,256
// tokens), and how long another workspace's stream on the same context waits meanwhile. The
// figures choose MAX_OPEN_GRAMMAR_ALTERNATIVES and MAX_GRAMMAR_TOKEN_MS (docs/measurements.md).
// Schemas past the limit are built here without the check, as the engine would build them.
import os from "node:os";
import {
    LlamaGrammarEvaluationState,
    LlamaJsonSchemaGrammar,
    TokenBias,
    type GbnfJsonBasicSchema,
    type LlamaGrammar,
    type LlamaModel,
    type Token
} from "node-llama-cpp";
import { measureGrammarAmbiguity } from "../../contract/rpc/grammarAmbiguity.js";
import { familyPresetNames, familyPresets, modelFamilies, type FamilyPresetName } from "../../synthetic/model/familyPresets.js";
import { familyVocabularies } from "../../synthetic/model/familyVocabularies.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { createSchemaGrammar } from "../../engine/runtime/schemaGrammar.js";
import { ambiguousSchema } from "../support/ambiguousSchema.js";
import { ensureFamilyModel } from "../support/generatedModels.js";
import { BENCH_GPU } from "./benchPrompt.js";
import { formatNumber, median, printTable, type Benchmark, type BenchFigures } from "./benchUtils.js";

/**
 * The shape as [levels, alike arrays a level]: 8 to 4,096 alternatives (8^levels), and
 * around the limit one level wide and several deep (each branch keeps about 4 stacks where its
 * string begins).
 */
const NESTED_SHAPES: readonly (readonly [number, number])[] = [
    [1, 8],
    [1, 12],
    [2, 4],
    [1, 32],
    [5, 2],
    [2, 8],
    [3, 8],
    [4, 8]
];
/** Values of the alike enums. */
const ENUM_SIZES = [8, 64, 512, 4_096] as const;
/** Tokens of the grammar's answer measured per case, after its first (which waits for the prompt). */
const NUM_TOKENS = 10;
/** A case stops at its next token past this long, so the 4,096 cases end in minutes (ms). */
const CASE_DEADLINE_MS = 45_000;
/**
 * One decode thread: the grammar's check runs on one thread whatever the context's count, and on a
 * shared machine a second decode thread's spinning only blurs the per-token figures.
 */
const THREADS = 1;

function presetFromEnvironment(): FamilyPresetName {
    const name = process.env.KVAULT_BENCH_GRAMMAR_PRESET ?? "llama3-tiny";
    if (!(familyPresetNames as readonly string[]).includes(name)) {
        throw new RangeError(`KVAULT_BENCH_GRAMMAR_PRESET is ${name}; use one of ${familyPresetNames.join(", ")}.`);
    }
    return name as FamilyPresetName;
}

/** `count` distinct values that all start with the same 7 characters: an enum that really is ambiguous there. */
function alikeEnum(count: number): Record<string, unknown> {
    return {
        type: "object",
        properties: {
            code: { enum: Array.from({ length: count }, (_, index) => `value-${index.toString(36)}-${(index * 7_919).toString(36)}`) }
        }
    };
}

interface Case {
    readonly shape: string;
    readonly schema: Record<string, unknown> | undefined;
    /** The enum's values, or the alike arrays' alternatives (branches^levels). */
    readonly size: number;
    /** How Kvault builds it (enums as tries) or node-llama-cpp alone (one alternative per value). */
    readonly builder: "kvault" | "node-llama-cpp";
    readonly prompt: string;
}

/** 26 × 26 × 6 three-letter codes (4,056, as ISO 4217's are three letters): at most 26 next letters at any point. */
function codesEnum(): Record<string, unknown> {
    const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const codes = [...letters].flatMap((first) => [...letters].flatMap((second) => [..."ABCDEF"].map((third) => first + second + third)));
    return { type: "object", properties: { code: { enum: codes } } };
}

function cases(): Case[] {
    const nested = "Nested lists, please: ";
    const pick = "Pick a code: ";
    return [
        { shape: "no grammar", schema: undefined, size: 0, builder: "kvault", prompt: nested },
        ...NESTED_SHAPES.map(
            ([levels, numBranches]): Case => ({
                shape: `nested alike arrays, ${levels}×${numBranches}`,
                schema: ambiguousSchema(levels, numBranches, { type: "string", minLength: 400 }, 1),
                size: numBranches ** levels,
                builder: "kvault",
                prompt: nested
            })
        ),
        ...ENUM_SIZES.flatMap((size): Case[] => [
            { shape: "enum, alike values", schema: alikeEnum(size), size, builder: "node-llama-cpp", prompt: pick },
            { shape: "enum, alike values", schema: alikeEnum(size), size, builder: "kvault", prompt: pick }
        ]),
        { shape: "enum, 3-letter codes", schema: codesEnum(), size: 26 * 26 * 6, builder: "node-llama-cpp", prompt: pick },
        { shape: "enum, 3-letter codes", schema: codesEnum(), size: 26 * 26 * 6, builder: "kvault", prompt: pick }
    ];
}

interface Row {
    readonly shape: string;
    readonly builder: string;
    /** The values, or the alike arrays' 8^levels, in the schema. */
    readonly size: number;
    /** measureGrammarAmbiguity's count of parse stacks for the grammar as built (an unfactored enum: one per value). */
    readonly numOpen: number;
    readonly numTokens: number;
    readonly medianTokenMs: number;
    readonly worstTokenMs: number;
    readonly worstTokenCpuMs: number;
    readonly otherMedianGapMs: number;
    readonly otherWorstGapMs: number;
    readonly text: string;
}

function countOf(item: Case): number {
    if (item.schema === undefined) {
        return 0;
    }
    return item.builder === "node-llama-cpp" ? item.size : measureGrammarAmbiguity(item.schema).numOpen;
}

/**
 * Every token of more than one character that starts with `[`, never sampled: each `[` of a nested
 * answer is then a token of its own, and the point just past it, where every alternative of the
 * next level is open, is a sampled token's (a token like `[["` would pass it inside one).
 */
function oneBracketATime(model: LlamaModel, numTokens: number): TokenBias {
    const bias = new TokenBias(model.tokenizer);
    for (let token = 0; token < numTokens; token++) {
        const text = model.detokenize([token as Token]);
        if (text.length > 1 && /^\s*\[/u.test(text)) {
            bias.set(token as Token, "never");
        }
    }
    return bias;
}

const cpuMs = (): number => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
};

export const grammarBench: Benchmark = {
    name: "grammar",
    description:
        "One grammar-held token's time and another workspace's worst gap beside it, at 8–4,096 open alternatives (nested alike arrays, alike enums as node-llama-cpp and as Kvault builds them) on a real 128k vocabulary",
    explicitOnly: true,
    async run(): Promise<BenchFigures> {
        const preset = presetFromEnvironment();
        const runtime = await LlamaRuntime.start({ gpu: BENCH_GPU, maxThreads: Math.max(THREADS, os.availableParallelism()) });
        const model = await runtime.loadModel(ensureFamilyModel(preset, "q8_0"));
        const context = await model.createContext({ contextSize: 4_096, sequences: 2, flashAttention: true, threads: THREADS });
        // one pair for every case, emptied before each
        const held = context.getSequence();
        const other = context.getSequence();
        const rows: Row[] = [];
        const numVocabularyTokens = familyVocabularies[modelFamilies[familyPresets[preset].family].vocabulary].numTokens;
        const brackets = oneBracketATime(model, numVocabularyTokens);
        const described = `${runtime.describe()}; ${preset} q8_0, vocabulary of ${numVocabularyTokens.toLocaleString("en-US")} tokens, ${THREADS} thread`;
        try {
            console.log(`runtime: ${described}`);
            for (const item of cases()) {
                const grammar: LlamaGrammar | undefined =
                    item.schema === undefined
                        ? undefined
                        : item.builder === "kvault"
                          ? createSchemaGrammar(runtime.llama, item.schema)
                          : new LlamaJsonSchemaGrammar(runtime.llama, item.schema as unknown as GbnfJsonBasicSchema);
                await held.clearHistory();
                await other.clearHistory();
                const tokens: Token[] = [];
                const tokenMs: number[] = [];
                const tokenCpuMs: number[] = [];
                const otherArrivals: number[] = [];
                let heldDone = false;
                const otherRun = (async () => {
                    for await (const _token of other.evaluate(model.tokenize("Tell me a long story about pages."), { temperature: 0 })) {
                        otherArrivals.push(performance.now());
                        if (heldDone) {
                            break;
                        }
                    }
                })();
                const startedAt = performance.now();
                let at = startedAt;
                let atCpu = cpuMs();
                for await (const token of held.evaluate(model.tokenize(item.prompt), {
                    temperature: 0,
                    ...(item.shape.startsWith("nested") ? { tokenBias: brackets } : {}),
                    ...(grammar === undefined ? {} : { grammarEvaluationState: new LlamaGrammarEvaluationState({ model, grammar }) })
                })) {
                    const now = performance.now();
                    const nowCpu = cpuMs();
                    if (tokens.length > 0) {
                        tokenMs.push(now - at);
                        tokenCpuMs.push(nowCpu - atCpu);
                    }
                    tokens.push(token);
                    at = now;
                    atCpu = nowCpu;
                    if (tokens.length > NUM_TOKENS || now - startedAt > CASE_DEADLINE_MS) {
                        break;
                    }
                }
                const heldEndedAt = performance.now();
                heldDone = true;
                await otherRun;
                // the other stream's gaps that began while the grammar's answer ran
                const gaps = otherArrivals
                    .slice(1)
                    .filter((_, index) => otherArrivals[index]! < heldEndedAt)
                    .map((arrival, index) => arrival - otherArrivals[index]!);
                const row: Row = {
                    shape: item.shape,
                    builder: item.schema === undefined ? "—" : item.builder,
                    size: item.size,
                    numOpen: countOf(item),
                    numTokens: tokenMs.length,
                    medianTokenMs: tokenMs.length > 0 ? median(tokenMs) : Number.NaN,
                    worstTokenMs: Math.max(...tokenMs),
                    worstTokenCpuMs: Math.max(...tokenCpuMs),
                    otherMedianGapMs: gaps.length > 0 ? median(gaps) : Number.NaN,
                    otherWorstGapMs: gaps.length > 0 ? Math.max(...gaps) : Number.NaN,
                    text: model.detokenize(tokens).slice(0, 24)
                };
                rows.push(row);
                console.log(
                    `  ${row.shape} (${row.builder}) ${row.size}: worst token ${formatNumber(row.worstTokenMs, 0)} ms, other's worst gap ${formatNumber(row.otherWorstGapMs, 0)} ms`
                );
            }
        } finally {
            await context.dispose();
            await model.dispose();
            await runtime.dispose();
        }
        const ms = (value: number) => (Number.isNaN(value) ? "—" : formatNumber(value, 0));
        printTable(
            `Grammar: up to ${NUM_TOKENS} tokens a case after the first (${described})`,
            [
                { header: "schema", cell: (row: Row) => row.shape, align: "left" },
                { header: "built by", cell: (row) => row.builder, align: "left" },
                { header: "size", cell: (row) => row.size.toLocaleString("en-US") },
                { header: "counted stacks", cell: (row) => row.numOpen.toLocaleString("en-US") },
                { header: "tokens", cell: (row) => String(row.numTokens) },
                { header: "token ms (median)", cell: (row) => ms(row.medianTokenMs) },
                { header: "worst token ms", cell: (row) => ms(row.worstTokenMs) },
                { header: "its CPU ms", cell: (row) => ms(row.worstTokenCpuMs) },
                { header: "other's gap ms (median)", cell: (row) => ms(row.otherMedianGapMs) },
                { header: "other's worst gap ms", cell: (row) => ms(row.otherWorstGapMs) },
                { header: "answer starts", cell: (row) => JSON.stringify(row.text), align: "left" }
            ],
            rows
        );
        return { preset, numVocabularyTokens, threads: THREADS, rows };
    }
};
