import { workspaceId } from "../../engine/core/ids.js";
import { KvEngine } from "../../engine/KvEngine.js";
import type { EngineMode } from "../../engine/EngineConfig.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { BENCH_GPU, BENCH_THREADS, benchEngineConfig, promptTokensOfLength, repetitionsFromEnvironment } from "./benchPrompt.js";
import { formatNumber, median, percentile, printTable, type Benchmark, type BenchFigures } from "./benchUtils.js";

/** B's prompts, one run each. */
const B_LENGTHS = [2048, 8192] as const;
const A_PROMPT_LENGTH = 64;
/** A streams this many tokens before B is submitted. */
const A_TOKENS_BEFORE_B = 10;
/** A stops this many tokens after B's first token, so its stream spans B's whole prefill. */
const A_TOKENS_AFTER_B = 5;
const PAGE_TOKENS = 256;
/** The longest prompt plus room, in whole pages. */
const CONTEXT_SIZE = Math.ceil((Math.max(...B_LENGTHS) + 256) / PAGE_TOKENS) * PAGE_TOKENS;
/** A's bound: as much as its sequence holds (in split mode A streams thousands of tokens during an 8k prefill on 2 cores). */
const A_MAX_TOKENS = CONTEXT_SIZE - A_PROMPT_LENGTH;
/** A run (A and B together) is cancelled past this; the benchmark then reports it and goes on. */
const RUN_TIMEOUT_MS = 240_000;
/** 1 by default (a run gives hundreds of inter-token gaps; the 8k prefill takes tens of seconds on 2 cores). */
const NUM_REPETITIONS = repetitionsFromEnvironment(1);

interface Arrangement {
    readonly name: string;
    readonly mode: EngineMode;
    readonly batchSize: number;
}

const ARRANGEMENTS: readonly Arrangement[] = [
    { name: "split, batch 512", mode: "split", batchSize: 512 },
    { name: "unified, batch 512", mode: "unified", batchSize: 512 },
    { name: "unified, batch 64", mode: "unified", batchSize: 64 }
];

interface RunSample {
    /** A's gaps between consecutive tokens that overlap B's prefill window (submit → B's first token), ms. */
    readonly gapsMs: readonly number[];
    /** A's gaps before B was submitted (its own steady rate), ms. */
    readonly gapsBeforeMs: readonly number[];
    /** B: from submit to its first token, measured at the callback; and the engine's own timings. */
    readonly bTimeToFirstTokenMs: number;
    readonly bPrefillMs: number;
    readonly bHandoffMs: number;
    readonly numATokens: number;
    /** Whether A was still streaming when B's first token came (otherwise the window is only partly covered). */
    readonly aCoveredWindow: boolean;
}

let nextWorkspace = 0;

/** A streams; after its 10th token B submits its prompt (maxTokens 1); A stops a few tokens after B's first token. */
async function runOnce(engine: KvEngine, aPrompt: readonly number[], bPrompt: readonly number[]): Promise<RunSample> {
    const a = workspaceId(`bench-itl-a-${nextWorkspace}`);
    const b = workspaceId(`bench-itl-b-${nextWorkspace++}`);
    // Cancels A and B together: past the time limit, or when B fails (A must not stream on alone).
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), RUN_TIMEOUT_MS);
    const arrivals: number[] = [];
    let bFirstTokenAt: number | undefined;
    let numAfterB = 0;
    let releaseB!: () => void;
    const aReady = new Promise<void>((resolve) => {
        releaseB = resolve;
    });
    const aDone = engine.generate({
        workspace: a,
        promptTokens: aPrompt,
        maxTokens: A_MAX_TOKENS,
        signal: controller.signal,
        onToken: () => {
            arrivals.push(performance.now());
            if (arrivals.length === A_TOKENS_BEFORE_B) {
                releaseB();
            }
            if (bFirstTokenAt !== undefined && ++numAfterB >= A_TOKENS_AFTER_B) {
                return "stop";
            }
            return undefined;
        }
    });
    try {
        await Promise.race([aReady, aDone]);
        if (arrivals.length < A_TOKENS_BEFORE_B) {
            throw new Error(`A ended after ${arrivals.length} tokens, before B could be submitted`);
        }
        const bSubmittedAt = performance.now();
        const bResult = await engine.generate({
            workspace: b,
            promptTokens: bPrompt,
            maxTokens: 1,
            signal: controller.signal,
            onToken: () => {
                bFirstTokenAt ??= performance.now();
            }
        });
        const windowEnd = bFirstTokenAt ?? performance.now();
        await aDone;
        const gapsMs: number[] = [];
        const gapsBeforeMs: number[] = [];
        for (let i = 1; i < arrivals.length; i++) {
            const gap = arrivals[i]! - arrivals[i - 1]!;
            if (arrivals[i]! > bSubmittedAt && arrivals[i - 1]! < windowEnd) {
                gapsMs.push(gap);
            } else if (arrivals[i]! <= bSubmittedAt) {
                gapsBeforeMs.push(gap);
            }
        }
        return {
            gapsMs,
            gapsBeforeMs,
            bTimeToFirstTokenMs: windowEnd - bSubmittedAt,
            bPrefillMs: bResult.timings.prefillMs,
            bHandoffMs: bResult.timings.handoffMs,
            numATokens: arrivals.length,
            aCoveredWindow: arrivals.at(-1)! >= windowEnd
        };
    } catch (error) {
        controller.abort();
        throw error;
    } finally {
        clearTimeout(timeout);
        await aDone.catch(() => undefined); // A has ended (stopped, finished or cancelled) before its workspace is forgotten
        await engine.forgetWorkspace(a);
        await engine.forgetWorkspace(b);
    }
}

interface RunResult {
    readonly arrangement: string;
    readonly bPromptTokens: number;
    /** A's inter-token latency over the gaps overlapping B's prefill, ms (all repetitions pooled). */
    readonly itlP50Ms: number;
    readonly itlP99Ms: number;
    readonly itlMaxMs: number;
    readonly numGaps: number;
    /** A's median gap before B came. */
    readonly itlBeforeP50Ms: number;
    readonly bTimeToFirstTokenMs: number;
    readonly bPrefillMs: number;
    readonly bHandoffMs: number;
    readonly aCoveredWindow: boolean;
    readonly error?: string;
    readonly samples: readonly Omit<RunSample, "gapsMs" | "gapsBeforeMs">[];
}

function summarize(arrangement: string, bPromptTokens: number, samples: readonly RunSample[], error?: string): RunResult {
    const gaps = samples.flatMap((sample) => sample.gapsMs);
    const before = samples.flatMap((sample) => sample.gapsBeforeMs);
    const orNaN = (values: readonly number[], fn: (values: readonly number[]) => number): number =>
        values.length > 0 ? fn(values) : Number.NaN;
    return {
        arrangement,
        bPromptTokens,
        itlP50Ms: orNaN(gaps, (values) => percentile(values, 50)),
        itlP99Ms: orNaN(gaps, (values) => percentile(values, 99)),
        itlMaxMs: orNaN(gaps, (values) => Math.max(...values)),
        numGaps: gaps.length,
        itlBeforeP50Ms: orNaN(before, (values) => percentile(values, 50)),
        bTimeToFirstTokenMs: orNaN(
            samples.map((sample) => sample.bTimeToFirstTokenMs),
            median
        ),
        bPrefillMs: orNaN(
            samples.map((sample) => sample.bPrefillMs),
            median
        ),
        bHandoffMs: orNaN(
            samples.map((sample) => sample.bHandoffMs),
            median
        ),
        aCoveredWindow: samples.every((sample) => sample.aCoveredWindow),
        ...(error !== undefined && { error }),
        samples: samples.map(({ gapsMs: _gaps, gapsBeforeMs: _before, ...rest }) => rest)
    };
}

async function benchArrangement(runtime: LlamaRuntime, modelPath: string, arrangement: Arrangement): Promise<RunResult[]> {
    const engine = await KvEngine.start(
        benchEngineConfig(modelPath, CONTEXT_SIZE, PAGE_TOKENS, {
            mode: arrangement.mode,
            numDecodeSequences: 2,
            batchSize: arrangement.batchSize
        }),
        { runtime }
    );
    try {
        if (engine.mode.effective !== arrangement.mode) {
            throw new Error(`the engine runs ${engine.mode.effective} although ${arrangement.mode} was asked for: ${engine.mode.reason}`);
        }
        const base = promptTokensOfLength((text) => engine.tokenize(text), A_PROMPT_LENGTH + 7);
        const aPrompt = [base[0]!, ...base.slice(8)]; // starts elsewhere in the text than B's prompts
        await runOnce(
            engine,
            aPrompt,
            promptTokensOfLength((text) => engine.tokenize(text), 256)
        ); // warm-up, not measured
        const results: RunResult[] = [];
        for (const length of B_LENGTHS) {
            const bPrompt = promptTokensOfLength((text) => engine.tokenize(text), length);
            const samples: RunSample[] = [];
            let error: string | undefined;
            for (let repetition = 0; repetition < NUM_REPETITIONS && error === undefined; repetition++) {
                try {
                    const sample = await runOnce(engine, aPrompt, bPrompt);
                    samples.push(sample);
                    console.log(
                        `  ${arrangement.name}, B ${length} tokens, repetition ${repetition + 1}/${NUM_REPETITIONS}: ` +
                            `A's gaps p50 ${formatNumber(percentile(sample.gapsMs, 50), 1)} ms, max ${formatNumber(Math.max(...sample.gapsMs), 0)} ms ` +
                            `(${sample.gapsMs.length} gaps); B's first token after ${formatNumber(sample.bTimeToFirstTokenMs, 0)} ms`
                    );
                } catch (caught) {
                    error = caught instanceof Error ? `${caught.name}: ${caught.message}` : String(caught);
                    console.log(`  ${arrangement.name}, B ${length} tokens: failed: ${error}`);
                }
            }
            results.push(summarize(arrangement.name, length, samples, error));
        }
        return results;
    } finally {
        await engine.dispose();
    }
}

export const itlBench: Benchmark = {
    name: "itl",
    description:
        "Inter-token latency of a streaming workspace while another prefills 2,048 and 8,192 tokens: split against unified (batch 512 and 64), small model",
    async run(): Promise<BenchFigures> {
        const modelPath = ensureGeneratedModel("small");
        const runtime = await LlamaRuntime.start({ gpu: BENCH_GPU, maxThreads: BENCH_THREADS });
        try {
            console.log(
                `runtime: ${runtime.describe()}; contexts of ${CONTEXT_SIZE} tokens per sequence, 2 decode sequences; ` +
                    `A: ${A_PROMPT_LENGTH}-token prompt, B submitted after A's ${A_TOKENS_BEFORE_B}th token`
            );
            const results: RunResult[] = [];
            for (const arrangement of ARRANGEMENTS) {
                results.push(...(await benchArrangement(runtime, modelPath, arrangement)));
            }

            const ms = (value: number): string => (Number.isNaN(value) ? "—" : `${formatNumber(value, value < 100 ? 1 : 0)} ms`);
            printTable(
                `A's inter-token latency while B prefills, small model (${NUM_REPETITIONS} run(s) each, ${runtime.describe()})`,
                [
                    { header: "arrangement", cell: (r: RunResult) => r.arrangement, align: "left" },
                    { header: "B prompt", cell: (r) => `${r.bPromptTokens} tok` },
                    { header: "A ITL before B", cell: (r) => ms(r.itlBeforeP50Ms) },
                    { header: "A ITL p50", cell: (r) => ms(r.itlP50Ms) },
                    { header: "p99", cell: (r) => ms(r.itlP99Ms) },
                    { header: "max", cell: (r) => ms(r.itlMaxMs) },
                    { header: "gaps", cell: (r) => `${r.numGaps}` },
                    { header: "B TTFT", cell: (r) => ms(r.bTimeToFirstTokenMs) },
                    { header: "B prefill", cell: (r) => (r.bPrefillMs > 0 ? ms(r.bPrefillMs) : "—") },
                    { header: "B handoff", cell: (r) => (r.bHandoffMs > 0 ? ms(r.bHandoffMs) : "—") },
                    { header: "note", cell: (r) => r.error ?? (r.aCoveredWindow ? "" : "A ended before B's first token"), align: "left" }
                ],
                results
            );
            console.log(
                "A ITL: gaps between A's consecutive tokens (KvEngine.generate's onToken) that overlap the window from B's submit " +
                    "to B's first token, so the gap a stalled A ends after B's prefill is counted; \"before B\": A's median gap before B came.\n" +
                    "B TTFT: from B's submit to its first token (callback). B prefill / handoff: the engine's timings (split only; unified evaluates in place)."
            );
            return {
                backend: runtime.describe(),
                threads: BENCH_THREADS,
                contextSize: CONTEXT_SIZE,
                aPromptTokens: A_PROMPT_LENGTH,
                numRepetitions: NUM_REPETITIONS,
                unit: "ms",
                results
            };
        } finally {
            await runtime.dispose();
        }
    }
};
