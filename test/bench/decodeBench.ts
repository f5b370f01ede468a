import type { LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import { workspaceId } from "../../engine/core/ids.js";
import { KvEngine } from "../../engine/KvEngine.js";
import type { EngineMode } from "../../engine/EngineConfig.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { releaseThreadsPromptly } from "../../engine/runtime/releaseThreadsPromptly.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { BENCH_GPU, BENCH_THREADS, benchEngineConfig, promptTokensOfLength, repetitionsFromEnvironment } from "./benchPrompt.js";
import { formatNumber, median, printTable, TokenClock, type Benchmark, type BenchFigures } from "./benchUtils.js";

const PROMPT_LENGTH = 512;
const NUM_GENERATED = 64;
const PAGE_TOKENS = 256;
const CONTEXT_SIZE = Math.ceil((PROMPT_LENGTH + NUM_GENERATED) / PAGE_TOKENS) * PAGE_TOKENS;
/** 3 by default; KVAULT_BENCH_REPETITIONS raises it where the machine is too noisy to separate the arms. */
const NUM_REPETITIONS = repetitionsFromEnvironment(3);

type Arm = "bare" | `engine ${EngineMode}`;
const ARMS: readonly Arm[] = ["bare", "engine split", "engine unified"];

/** One run, timed where each generated token reaches the caller (ms, from `performance.now()`). */
interface RunSample {
    readonly timeToFirstTokenMs: number;
    /** Tokens after the first, per second from the first token to the last. */
    readonly decodeTokensPerSecond: number;
    readonly numTokens: number;
    readonly tokens: readonly number[];
    /** Engine only: prompt tokens prefill handed off through pages (0 when evaluated in place or unified). */
    readonly numHandedOffTokens?: number;
    /** The engine's own timings (split and unified only). */
    readonly engineTimings?: { prefillMs: number; handoffMs: number; timeToFirstTokenMs: number; decodeMs: number };
}

/** One run's figures from its clock. */
function sampleOf(clock: TokenClock): Omit<RunSample, "engineTimings"> {
    return {
        timeToFirstTokenMs: clock.timeToFirstTokenMs,
        decodeTokensPerSecond: clock.decodeTokensPerSecond,
        numTokens: clock.tokens.length,
        tokens: clock.tokens
    };
}

/** node-llama-cpp alone: one context, one sequence, the same thread count; greedy, stopping at an end-of-generation token. */
async function runBare(model: LlamaModel, sequence: LlamaContextSequence, promptTokens: readonly number[]): Promise<RunSample> {
    const clock = new TokenClock();
    try {
        for await (const token of sequence.evaluate(promptTokens as Token[], { temperature: 0 })) {
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
    return sampleOf(clock);
}

let nextWorkspace = 0;

/**
 * One request as a new workspace, forgotten after its last token (outside the clock): no prefix
 * reuse, and no idle workspace for the next request to swap out first, as bare clears its sequence.
 */
async function runEngine(engine: KvEngine, promptTokens: readonly number[]): Promise<RunSample> {
    const workspace = workspaceId(`bench-decode-${nextWorkspace++}`);
    const clock = new TokenClock();
    try {
        const result = await engine.generate({
            workspace,
            promptTokens,
            maxTokens: NUM_GENERATED,
            onToken: (token) => clock.onToken(token)
        });
        if (result.numReusedTokens !== 0) {
            throw new Error(`a new workspace reused ${result.numReusedTokens} prompt tokens; the benchmark needs a cold prompt`);
        }
        return { ...sampleOf(clock), numHandedOffTokens: result.numHandedOffTokens, engineTimings: { ...result.timings } };
    } finally {
        await engine.forgetWorkspace(workspace);
    }
}

function startEngine(runtime: LlamaRuntime, modelPath: string, mode: EngineMode): Promise<KvEngine> {
    return KvEngine.start(benchEngineConfig(modelPath, CONTEXT_SIZE, PAGE_TOKENS, { mode }), { runtime });
}

interface ArmResult {
    readonly arm: Arm;
    readonly timeToFirstTokenMs: number;
    readonly decodeTokensPerSecond: number;
    /** Relative to bare: decode rate ÷ bare's (aim ≥ 0.97), TTFT ÷ bare's. */
    readonly decodeRatioToBare: number;
    readonly timeToFirstTokenRatioToBare: number;
    /** Slowest and fastest repetition's decode rate, to show the spread behind the median. */
    readonly decodeTokensPerSecondRange: readonly [number, number];
    readonly prefillMs?: number;
    readonly handoffMs?: number;
    /** Prompt tokens handed off through pages (split: the prompt less its last token). */
    readonly numHandedOffTokens?: number;
    readonly numTokens: number;
    /** Whether every repetition generated the same tokens as bare's first run (greedy). */
    readonly sameTokensAsBare: boolean;
    readonly samples: readonly Omit<RunSample, "tokens">[];
}

export const decodeBench: Benchmark = {
    name: "decode",
    description: "Engine decode tokens/s and time to first token against bare node-llama-cpp, small model, split and unified",
    async run(): Promise<BenchFigures> {
        const modelPath = ensureGeneratedModel("small");
        // One binding for all three arms, started as the engine starts it (getLlama with the same gpu and maxThreads).
        const runtime = await LlamaRuntime.start({ gpu: BENCH_GPU, maxThreads: BENCH_THREADS });
        const cleanup: (() => Promise<void>)[] = [() => runtime.dispose()];
        try {
            const bareModel = await runtime.loadModel(modelPath);
            cleanup.unshift(() => bareModel.dispose());
            const bareContext = await bareModel.createContext({
                contextSize: CONTEXT_SIZE,
                sequences: 1,
                flashAttention: true,
                threads: BENCH_THREADS
            });
            cleanup.unshift(() => bareContext.dispose());
            // Bare gives up its claim on the threads with its last decode, as the engine's contexts do:
            // held a timer longer (node-llama-cpp's own), it halved the threads of the arm that ran next.
            releaseThreadsPromptly(bareContext);
            const bareSequence = bareContext.getSequence();
            const split = await startEngine(runtime, modelPath, "split");
            cleanup.unshift(() => split.dispose());
            const unified = await startEngine(runtime, modelPath, "unified");
            cleanup.unshift(() => unified.dispose());
            for (const engine of [split, unified]) {
                if (engine.mode.effective !== engine.mode.requested) {
                    throw new Error(
                        `the engine runs ${engine.mode.effective} although ${engine.mode.requested} was asked for: ${engine.mode.reason}`
                    );
                }
            }
            console.log(
                `runtime: ${runtime.describe()}; bare context ${bareContext.contextSize} tokens, ${BENCH_THREADS} threads; ` +
                    `engines: window ${split.window.limit} (split), ${unified.window.limit} (unified)`
            );

            const promptTokens = promptTokensOfLength((text) => bareModel.tokenize(text), PROMPT_LENGTH);
            const runArm = (arm: Arm): Promise<RunSample> =>
                arm === "bare"
                    ? runBare(bareModel, bareSequence, promptTokens)
                    : runEngine(arm === "engine split" ? split : unified, promptTokens);

            for (const arm of ARMS) {
                await runArm(arm);
            } // warm-up, not measured
            const samples = new Map<Arm, RunSample[]>(ARMS.map((arm) => [arm, []]));
            for (let repetition = 0; repetition < NUM_REPETITIONS; repetition++) {
                // The order rotates each repetition, so no arm always runs first or after the same one.
                const order = ARMS.map((_, index) => ARMS[(index + repetition) % ARMS.length]!);
                for (const arm of order) {
                    const sample = await runArm(arm);
                    samples.get(arm)!.push(sample);
                    console.log(
                        `  ${arm}, repetition ${repetition + 1}/${NUM_REPETITIONS}: TTFT ${formatNumber(sample.timeToFirstTokenMs, 0)} ms, ` +
                            `decode ${formatNumber(sample.decodeTokensPerSecond, 1)} tok/s (${sample.numTokens} tokens)`
                    );
                }
            }

            const bareRuns = samples.get("bare")!;
            const bareTokens = bareRuns[0]!.tokens;
            const bareTtft = median(bareRuns.map((run) => run.timeToFirstTokenMs));
            const bareRate = median(bareRuns.map((run) => run.decodeTokensPerSecond));
            const results: ArmResult[] = ARMS.map((arm) => {
                const runs = samples.get(arm)!;
                const timeToFirstTokenMs = median(runs.map((run) => run.timeToFirstTokenMs));
                const rates = runs.map((run) => run.decodeTokensPerSecond);
                const decodeTokensPerSecond = median(rates);
                const engineRuns = arm === "engine split" ? runs.flatMap((run) => (run.engineTimings ? [run.engineTimings] : [])) : [];
                return {
                    arm,
                    timeToFirstTokenMs,
                    decodeTokensPerSecond,
                    decodeRatioToBare: decodeTokensPerSecond / bareRate,
                    timeToFirstTokenRatioToBare: timeToFirstTokenMs / bareTtft,
                    decodeTokensPerSecondRange: [Math.min(...rates), Math.max(...rates)],
                    ...(engineRuns.length > 0 && {
                        prefillMs: median(engineRuns.map((timings) => timings.prefillMs)),
                        handoffMs: median(engineRuns.map((timings) => timings.handoffMs)),
                        numHandedOffTokens: median(runs.map((run) => run.numHandedOffTokens ?? 0))
                    }),
                    numTokens: median(runs.map((run) => run.numTokens)),
                    sameTokensAsBare: runs.every(
                        (run) => run.tokens.length === bareTokens.length && run.tokens.every((token, i) => token === bareTokens[i])
                    ),
                    samples: runs.map(({ tokens: _tokens, ...rest }) => rest)
                };
            });
            const ms = (value: number | undefined): string => (value === undefined ? "—" : `${formatNumber(value, 0)} ms`);
            printTable(
                `Decode and time to first token, small model, prompt ${PROMPT_LENGTH} tok, ${NUM_GENERATED} generated ` +
                    `(median of ${NUM_REPETITIONS}, interleaved in rotating order, ${runtime.describe()})`,
                [
                    { header: "arm", cell: (r: ArmResult) => r.arm, align: "left" },
                    { header: "TTFT", cell: (r) => ms(r.timeToFirstTokenMs) },
                    { header: "TTFT ÷ bare", cell: (r) => `${formatNumber(r.timeToFirstTokenRatioToBare, 3)}×` },
                    { header: "prefill", cell: (r) => ms(r.prefillMs) },
                    {
                        header: "handoff",
                        cell: (r) => (r.handoffMs === undefined ? "—" : `${formatNumber(r.handoffMs, 1)} ms (${r.numHandedOffTokens} tok)`)
                    },
                    { header: "decode", cell: (r) => `${formatNumber(r.decodeTokensPerSecond, 1)} tok/s` },
                    { header: "decode ÷ bare", cell: (r) => `${formatNumber(100 * r.decodeRatioToBare, 1)} %` },
                    {
                        header: "decode range",
                        cell: (r) =>
                            `${formatNumber(r.decodeTokensPerSecondRange[0], 1)}–${formatNumber(r.decodeTokensPerSecondRange[1], 1)} tok/s`
                    },
                    { header: "tokens", cell: (r) => `${r.numTokens}` },
                    { header: "same tokens as bare", cell: (r) => (r.sameTokensAsBare ? "yes" : "no") }
                ],
                results
            );
            console.log(
                "TTFT: from the call to the first token reaching the caller (bare: sequence.evaluate; engine: generate's onToken). " +
                    "decode: tokens after the first ÷ time from the first to the last. Aim: decode ≥ 97 % of bare.\n" +
                    "The range is the spread behind the median: where single tokens stall for tens of ms (a busy 2-core machine), " +
                    "3 repetitions cannot separate the arms within a few %; raise KVAULT_BENCH_REPETITIONS."
            );
            return {
                backend: runtime.describe(),
                threads: BENCH_THREADS,
                contextSize: CONTEXT_SIZE,
                promptTokens: PROMPT_LENGTH,
                numGenerated: NUM_GENERATED,
                numRepetitions: NUM_REPETITIONS,
                unit: "ms, tokens/s",
                arms: results
            };
        } finally {
            for (const step of cleanup) {
                await step();
            }
        }
    }
};
