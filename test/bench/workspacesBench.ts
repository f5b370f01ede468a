import type { LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import { workspaceId } from "../../engine/core/ids.js";
import { KvEngine } from "../../engine/KvEngine.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { BENCH_GPU, BENCH_THREADS, benchEngineConfig, promptTokensOfLength, repetitionsFromEnvironment } from "./benchPrompt.js";
import { formatNumber, median, printTable, TokenClock, type Benchmark, type BenchFigures } from "./benchUtils.js";

/** 1, 2, 4 and 8; KVAULT_BENCH_WORKSPACES=4 (or 2,4) runs only those. */
const WORKSPACE_COUNTS = workspaceCountsFromEnvironment([1, 2, 4, 8]);
/** 64 by default; KVAULT_BENCH_PROMPT_TOKENS=470 measures prompts of the peer benchmark's length (at most 900). */
const PROMPT_LENGTH = promptLengthFromEnvironment(64);
const NUM_GENERATED = 64;
/** Tokens per sequence, bare and engine alike. */
const CONTEXT_SIZE = 1024;
const PAGE_TOKENS = 256;
/** 5 by default: on a shared 2-core machine single repetitions run several times slower when another process wakes. */
const NUM_REPETITIONS = repetitionsFromEnvironment(5);

/**
 * "in place": the prompts are evaluated in the decode context (inPlacePrefillTokens ≥ the prompt), all
 * workspaces together, as bare does. "handoff": each prompt goes through the prefill context and pages
 * (the default threshold), prefilled together on one prefill sequence per workspace, while the workspaces
 * already handed off decode. "handoff, 1 prefill seq": the same with one prefill sequence, as before
 * prompts arriving together were prefilled together: each waits for the one before it.
 */
type Arm = "bare" | "engine in place" | "engine handoff" | "handoff, 1 prefill seq";
const ARMS: readonly Arm[] = ["bare", "engine in place", "engine handoff", "handoff, 1 prefill seq"];

function promptLengthFromEnvironment(fallback: number): number {
    const value = Number(process.env.KVAULT_BENCH_PROMPT_TOKENS ?? fallback);
    if (!Number.isSafeInteger(value) || value < 2 || value > 900) {
        throw new RangeError(`KVAULT_BENCH_PROMPT_TOKENS is ${process.env.KVAULT_BENCH_PROMPT_TOKENS}; use a whole number from 2 to 900.`);
    }
    return value;
}

function workspaceCountsFromEnvironment(fallback: readonly number[]): readonly number[] {
    const given = process.env.KVAULT_BENCH_WORKSPACES;
    if (given === undefined) {
        return fallback;
    }
    const counts = given.split(",").map(Number);
    if (counts.some((count) => !Number.isSafeInteger(count) || count < 1 || count > 16)) {
        throw new RangeError(`KVAULT_BENCH_WORKSPACES is "${given}"; use whole numbers from 1 to 16, separated by commas.`);
    }
    return counts;
}

/** One workspace's stream: each token and when it reached the caller. */
type Stream = TokenClock;

interface RunSample {
    /**
     * Generated tokens per second while every workspace was generating: from the moment the last
     * workspace got its first token to the moment the first workspace got its last one. A token
     * counts for the part of its inter-token interval inside that window.
     */
    readonly allRunningTokensPerSecond: number;
    readonly allRunningMs: number;
    /** Every generated token ÷ the time from the call to the last token (prompts included). */
    readonly endToEndTokensPerSecond: number;
    /** From the call until every workspace had its first token. */
    readonly allFirstTokensMs: number;
    readonly numTokens: number;
}

/** Tokens of `arrivals` produced inside [from, to]: each token's interval since the previous one, counted pro rata. */
function tokensWithin(arrivals: readonly number[], from: number, to: number): number {
    let sum = 0;
    for (let i = 1; i < arrivals.length; i++) {
        const previous = arrivals[i - 1]!;
        const current = arrivals[i]!;
        if (current <= previous) {
            sum += current >= from && current <= to ? 1 : 0;
            continue;
        }
        const overlap = Math.min(current, to) - Math.max(previous, from);
        if (overlap > 0) {
            sum += overlap / (current - previous);
        }
    }
    return sum;
}

function measure(startedAt: number, streams: readonly Stream[]): RunSample {
    // A workspace that ended at once (an end-of-generation token first) takes no part in the window.
    const generating = streams.filter((stream) => stream.arrivals.length >= 2);
    const from = Math.max(...generating.map((stream) => stream.arrivals[0]!));
    const to = Math.min(...generating.map((stream) => stream.arrivals.at(-1)!));
    const produced = generating.reduce((sum, stream) => sum + tokensWithin(stream.arrivals, from, to), 0);
    const numTokens = streams.reduce((sum, stream) => sum + stream.tokens.length, 0);
    return {
        allRunningTokensPerSecond: to > from ? produced / ((to - from) / 1000) : Number.NaN,
        allRunningMs: to - from,
        endToEndTokensPerSecond: numTokens / ((Math.max(...generating.map((stream) => stream.arrivals.at(-1)!)) - startedAt) / 1000),
        allFirstTokensMs: from - startedAt,
        numTokens
    };
}

/**
 * The same prompt for every workspace (the engine must not share it across workspaces: checked by
 * numReusedTokens = 0), so every stream generates the same tokens and none ends early.
 */
function workspacePrompts(tokenize: (text: string) => readonly number[], count: number): number[][] {
    const prompt = promptTokensOfLength(tokenize, PROMPT_LENGTH);
    return Array.from({ length: count }, () => [...prompt]);
}

/** node-llama-cpp alone: N sequences of one context evaluate their prompts and generate at the same time (greedy). */
async function runBare(model: LlamaModel, sequences: readonly LlamaContextSequence[], prompts: readonly number[][]): Promise<Stream[]> {
    const streams: Stream[] = prompts.map(() => new TokenClock());
    try {
        await Promise.all(
            sequences.map(async (sequence, index) => {
                const stream = streams[index]!;
                for await (const token of sequence.evaluate(prompts[index] as Token[], { temperature: 0 })) {
                    if (model.isEogToken(token)) {
                        break;
                    }
                    stream.onToken(token);
                    if (stream.tokens.length >= NUM_GENERATED) {
                        break;
                    }
                }
            })
        );
    } finally {
        for (const sequence of sequences) {
            await sequence.clearHistory();
        }
    }
    return streams;
}

let nextWorkspace = 0;

/** N new workspaces at once, each forgotten after the last token of all (outside the clock). */
async function runEngine(engine: KvEngine, prompts: readonly number[][], expectHandoff: boolean): Promise<Stream[]> {
    const workspaces = prompts.map(() => workspaceId(`bench-workspaces-${nextWorkspace++}`));
    const streams: Stream[] = prompts.map(() => new TokenClock());
    try {
        const results = await Promise.all(
            prompts.map((promptTokens, index) =>
                engine.generate({
                    workspace: workspaces[index]!,
                    promptTokens,
                    maxTokens: NUM_GENERATED,
                    onToken: (token) => {
                        streams[index]!.onToken(token);
                    }
                })
            )
        );
        for (const result of results) {
            const expected = expectHandoff ? PROMPT_LENGTH - 1 : 0;
            if (result.numReusedTokens !== 0 || result.numHandedOffTokens !== expected) {
                throw new Error(
                    `a new workspace reused ${result.numReusedTokens} prompt tokens and handed off ${result.numHandedOffTokens}; ` +
                        `the benchmark needs 0 and ${expected}`
                );
            }
        }
    } finally {
        for (const workspace of workspaces) {
            await engine.forgetWorkspace(workspace);
        }
    }
    return streams;
}

function startEngine(
    runtime: LlamaRuntime,
    modelPath: string,
    numWorkspaces: number,
    inPlacePrefillTokens: number,
    numPrefillSequences = numWorkspaces
): Promise<KvEngine> {
    return KvEngine.start(
        benchEngineConfig(modelPath, CONTEXT_SIZE, PAGE_TOKENS, {
            numDecodeSequences: numWorkspaces,
            numPrefillSequences,
            inPlacePrefillTokens
        }),
        { runtime }
    );
}

interface ArmResult {
    readonly numWorkspaces: number;
    readonly arm: Arm;
    readonly allRunningTokensPerSecond: number;
    /** Median all-running rate ÷ bare's (aim ≥ 0.95). */
    readonly ratioToBare: number;
    /**
     * Best repetition's rate ÷ bare's best: on a shared 2-core machine a repetition that another
     * process interrupts runs several times slower, and the best one is the least disturbed.
     */
    readonly bestRatioToBare: number;
    readonly allRunningTokensPerSecondRange: readonly [number, number];
    readonly allRunningMs: number;
    readonly endToEndTokensPerSecond: number;
    readonly allFirstTokensMs: number;
    readonly numTokens: number;
    /** Whether every workspace generated the same tokens as its bare sequence in bare's first run (greedy). */
    readonly sameTokensAsBare: boolean;
    readonly samples: readonly RunSample[];
}

async function benchCount(runtime: LlamaRuntime, modelPath: string, bareModel: LlamaModel, numWorkspaces: number): Promise<ArmResult[]> {
    const cleanup: (() => Promise<void>)[] = [];
    try {
        const bareContext = await bareModel.createContext({
            contextSize: CONTEXT_SIZE,
            sequences: numWorkspaces,
            flashAttention: true,
            threads: BENCH_THREADS
        });
        cleanup.unshift(() => bareContext.dispose());
        const bareSequences = Array.from({ length: numWorkspaces }, () => bareContext.getSequence());
        const inPlace = await startEngine(runtime, modelPath, numWorkspaces, PROMPT_LENGTH);
        cleanup.unshift(() => inPlace.dispose());
        const handoff = await startEngine(runtime, modelPath, numWorkspaces, 0);
        cleanup.unshift(() => handoff.dispose());
        const oneByOne = await startEngine(runtime, modelPath, numWorkspaces, 0, 1);
        cleanup.unshift(() => oneByOne.dispose());
        const engines = new Map<Arm, KvEngine>([
            ["engine in place", inPlace],
            ["engine handoff", handoff],
            ["handoff, 1 prefill seq", oneByOne]
        ]);
        for (const engine of engines.values()) {
            if (engine.mode.effective !== "split") {
                throw new Error(`the engine runs ${engine.mode.effective} although split was asked for: ${engine.mode.reason}`);
            }
        }

        const prompts = workspacePrompts((text) => bareModel.tokenize(text), numWorkspaces);
        const runArm = async (arm: Arm): Promise<{ sample: RunSample; streams: Stream[] }> => {
            const startedAt = performance.now();
            const streams =
                arm === "bare"
                    ? await runBare(bareModel, bareSequences, prompts)
                    : await runEngine(engines.get(arm)!, prompts, arm !== "engine in place");
            return { sample: measure(startedAt, streams), streams };
        };

        for (const arm of ARMS) {
            await runArm(arm);
        } // warm-up, not measured
        const runs = new Map<Arm, { sample: RunSample; streams: Stream[] }[]>(ARMS.map((arm) => [arm, []]));
        for (let repetition = 0; repetition < NUM_REPETITIONS; repetition++) {
            const order = ARMS.map((_, index) => ARMS[(index + repetition) % ARMS.length]!);
            for (const arm of order) {
                const run = await runArm(arm);
                runs.get(arm)!.push(run);
                console.log(
                    `  ${numWorkspaces} workspace(s), ${arm}, repetition ${repetition + 1}/${NUM_REPETITIONS}: ` +
                        `${formatNumber(run.sample.allRunningTokensPerSecond, 1)} tok/s all running (${formatNumber(run.sample.allRunningMs, 0)} ms), ` +
                        `${formatNumber(run.sample.endToEndTokensPerSecond, 1)} tok/s end to end, ${run.sample.numTokens} tokens`
                );
            }
        }

        const bareStreams = runs.get("bare")![0]!.streams;
        const bareRates = runs.get("bare")!.map((run) => run.sample.allRunningTokensPerSecond);
        const bareRate = median(bareRates);
        return ARMS.map((arm) => {
            const armRuns = runs.get(arm)!;
            const samples = armRuns.map((run) => run.sample);
            const rates = samples.map((sample) => sample.allRunningTokensPerSecond);
            const rate = median(rates);
            return {
                numWorkspaces,
                arm,
                allRunningTokensPerSecond: rate,
                ratioToBare: rate / bareRate,
                bestRatioToBare: Math.max(...rates) / Math.max(...bareRates),
                allRunningTokensPerSecondRange: [Math.min(...rates), Math.max(...rates)],
                allRunningMs: median(samples.map((sample) => sample.allRunningMs)),
                endToEndTokensPerSecond: median(samples.map((sample) => sample.endToEndTokensPerSecond)),
                allFirstTokensMs: median(samples.map((sample) => sample.allFirstTokensMs)),
                numTokens: median(samples.map((sample) => sample.numTokens)),
                sameTokensAsBare: armRuns.every((run) =>
                    run.streams.every((stream, index) => {
                        const expected = bareStreams[index]!.tokens;
                        return stream.tokens.length === expected.length && stream.tokens.every((token, i) => token === expected[i]);
                    })
                ),
                samples
            };
        });
    } finally {
        for (const step of cleanup) {
            await step();
        }
    }
}

export const workspacesBench: Benchmark = {
    name: "workspaces",
    description:
        "Aggregate decode tokens/s of 1, 2, 4 and 8 concurrent workspaces against bare node-llama-cpp with as many sequences, small model, split mode",
    async run(): Promise<BenchFigures> {
        const modelPath = ensureGeneratedModel("small");
        // One binding for every arm, started as the engine starts it (getLlama with the same gpu and maxThreads).
        const runtime = await LlamaRuntime.start({ gpu: BENCH_GPU, maxThreads: BENCH_THREADS });
        const cleanup: (() => Promise<void>)[] = [() => runtime.dispose()];
        try {
            const bareModel = await runtime.loadModel(modelPath);
            cleanup.unshift(() => bareModel.dispose());
            console.log(
                `runtime: ${runtime.describe()}; contexts of ${CONTEXT_SIZE} tokens per sequence, ${BENCH_THREADS} threads, flash attention`
            );
            const results: ArmResult[] = [];
            for (const numWorkspaces of WORKSPACE_COUNTS) {
                results.push(...(await benchCount(runtime, modelPath, bareModel, numWorkspaces)));
            }

            const ms = (value: number): string => (Number.isNaN(value) ? "—" : `${formatNumber(value, 0)} ms`);
            const rate = (value: number): string => (Number.isNaN(value) ? "—" : `${formatNumber(value, 1)} tok/s`);
            printTable(
                `Concurrent workspaces, small model, prompt ${PROMPT_LENGTH} tok and ${NUM_GENERATED} generated per workspace ` +
                    `(median of ${NUM_REPETITIONS}, arms interleaved in rotating order, ${runtime.describe()})`,
                [
                    { header: "workspaces", cell: (r: ArmResult) => `${r.numWorkspaces}` },
                    { header: "arm", cell: (r) => r.arm, align: "left" },
                    { header: "all running", cell: (r) => rate(r.allRunningTokensPerSecond) },
                    { header: "÷ bare", cell: (r) => (Number.isNaN(r.ratioToBare) ? "—" : `${formatNumber(100 * r.ratioToBare, 1)} %`) },
                    {
                        header: "range",
                        cell: (r) =>
                            Number.isNaN(r.allRunningTokensPerSecond)
                                ? "—"
                                : `${formatNumber(r.allRunningTokensPerSecondRange[0], 1)}–${formatNumber(r.allRunningTokensPerSecondRange[1], 1)}`
                    },
                    {
                        header: "best ÷ bare best",
                        cell: (r) => (Number.isNaN(r.bestRatioToBare) ? "—" : `${formatNumber(100 * r.bestRatioToBare, 1)} %`)
                    },
                    { header: "window", cell: (r) => (r.allRunningMs > 0 ? ms(r.allRunningMs) : "—") },
                    { header: "end to end", cell: (r) => rate(r.endToEndTokensPerSecond) },
                    { header: "all first tokens", cell: (r) => ms(r.allFirstTokensMs) },
                    { header: "tokens", cell: (r) => `${r.numTokens}` },
                    { header: "same tokens as bare", cell: (r) => (r.sameTokensAsBare ? "yes" : "no") }
                ],
                results
            );
            console.log(
                "all running: tokens generated while every workspace was generating (from the last workspace's first token to the " +
                    "first workspace's last token; each token counted for the part of its inter-token interval inside that window) ÷ the window; " +
                    "— where there was no such moment (the first workspace finished before the last one started). " +
                    "Measured the same way for every arm, from the token callbacks. Aim: engine ≥ 95 % of bare. " +
                    "A repetition another process interrupts runs several times slower on 2 cores: read the range, and best ÷ bare best.\n" +
                    "end to end: all generated tokens ÷ time from the call to the last token, prompts included. " +
                    "engine in place: prompts evaluated in the decode context; engine handoff: each through prefill and pages, prefilled together " +
                    "(one prefill sequence per workspace); handoff, 1 prefill seq: the same, one prompt after another.\n" +
                    "same tokens as bare: every stream of every repetition equals bare's first run, token for token (greedy)."
            );
            return {
                backend: runtime.describe(),
                threads: BENCH_THREADS,
                contextSize: CONTEXT_SIZE,
                promptTokens: PROMPT_LENGTH,
                numGenerated: NUM_GENERATED,
                numRepetitions: NUM_REPETITIONS,
                unit: "ms, tokens/s",
                results
            };
        } finally {
            for (const step of cleanup) {
                await step();
            }
        }
    }
};
