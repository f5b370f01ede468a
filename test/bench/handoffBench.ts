import { workspaceId } from "../../engine/core/ids.js";
import { bytesPerToken } from "../../engine/codec/KvLayout.js";
import { KvEngine, type GenerateResult } from "../../engine/KvEngine.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { BENCH_THREADS, benchEngineConfig, promptTokensOfLength, repetitionsFromEnvironment } from "./benchPrompt.js";
import { formatBytes, formatNumber, median, printTable, type Benchmark, type BenchFigures } from "./benchUtils.js";

const PROMPT_LENGTHS = [512, 2048, 8192] as const;
const PAGE_TOKENS = 256;
/** The longest prompt plus room to generate, rounded up to whole pages. */
const CONTEXT_SIZE = Math.ceil((Math.max(...PROMPT_LENGTHS) + 64) / PAGE_TOKENS) * PAGE_TOKENS;
const NUM_REPETITIONS = repetitionsFromEnvironment(3);
/** Handoff is measured up to the first token; one is enough. */
const MAX_TOKENS = 1;

interface LengthResult {
    readonly promptTokens: number;
    /** Tokens prefill evaluated and handed off (the prompt less its last token, which decode evaluates). */
    readonly handedOffTokens: number;
    readonly kvBytes: number;
    readonly prefillMs: number;
    readonly handoffMs: number;
    readonly handoffPercentOfPrefill: number;
    readonly prefillTokensPerSecond: number;
    readonly timeToFirstTokenMs: number;
    /** KV bytes handed off per second of handoff, decimal GB/s. */
    readonly handoffGBps: number;
    readonly samples: readonly { prefillMs: number; handoffMs: number; timeToFirstTokenMs: number }[];
}

interface ExchangeRun {
    readonly backend: string;
    readonly stateExchange: "memory" | "file";
    readonly kvBytesPerToken: number;
    readonly results: readonly LengthResult[];
}

/** One engine, its states through `stateExchange`: each prompt length's prefill and handoff, median of the repetitions. */
async function measure(modelPath: string, stateExchange: "auto" | "file"): Promise<ExchangeRun> {
    const engine = await KvEngine.start(benchEngineConfig(modelPath, CONTEXT_SIZE, PAGE_TOKENS, { stateExchange }));
    try {
        const kvBytesPerToken = bytesPerToken(engine.layout);
        console.log(
            `engine: ${engine.backend}; states through ${engine.stateExchange.kind} (${engine.stateExchange.reason}); window ${engine.window.limit} tokens (bound by ${engine.window.boundBy}); ` +
                `${formatBytes(kvBytesPerToken)} KV per token; pages of ${PAGE_TOKENS} tokens = ${formatBytes(PAGE_TOKENS * kvBytesPerToken)}`
        );
        const prompts = new Map(PROMPT_LENGTHS.map((length) => [length, promptTokensOfLength((text) => engine.tokenize(text), length)]));
        if (engine.mode.effective !== "split") {
            throw new Error(`the engine runs ${engine.mode.effective} although split was asked for: ${engine.mode.reason}`);
        }
        let nextWorkspace = 0;
        // Each request is a new workspace, forgotten (outside the timings) before the next: no
        // prefix reuse, and no idle workspace for the next request to swap out first.
        const generate = async (promptTokens: readonly number[]): Promise<GenerateResult> => {
            const workspace = workspaceId(`bench-handoff-${nextWorkspace++}`);
            try {
                const result = await engine.generate({ workspace, promptTokens, maxTokens: MAX_TOKENS });
                if (result.numHandedOffTokens !== promptTokens.length - 1 || result.numReusedTokens !== 0) {
                    throw new Error(
                        `a ${promptTokens.length}-token prompt reused ${result.numReusedTokens} tokens and handed off ` +
                            `${result.numHandedOffTokens}; the benchmark needs 0 and ${promptTokens.length - 1}`
                    );
                }
                return result;
            } finally {
                await engine.forgetWorkspace(workspace);
            }
        };

        await generate(prompts.get(PROMPT_LENGTHS[0])!); // warm-up, not measured
        const samples = new Map<number, GenerateResult[]>(PROMPT_LENGTHS.map((length) => [length, []]));
        for (let repetition = 0; repetition < NUM_REPETITIONS; repetition++) {
            for (const length of PROMPT_LENGTHS) {
                const result = await generate(prompts.get(length)!);
                samples.get(length)!.push(result);
                console.log(
                    `  ${length} tokens, repetition ${repetition + 1}/${NUM_REPETITIONS}: prefill ${formatNumber(result.timings.prefillMs, 0)} ms, ` +
                        `handoff ${formatNumber(result.timings.handoffMs, 1)} ms`
                );
            }
        }

        const results: LengthResult[] = PROMPT_LENGTHS.map((length) => {
            const runs = samples.get(length)!;
            const handedOffTokens = runs[0]!.numHandedOffTokens;
            const prefillMs = median(runs.map((run) => run.timings.prefillMs));
            const handoffMs = median(runs.map((run) => run.timings.handoffMs));
            const kvBytes = handedOffTokens * kvBytesPerToken;
            return {
                promptTokens: length,
                handedOffTokens,
                kvBytes,
                prefillMs,
                handoffMs,
                handoffPercentOfPrefill: (100 * handoffMs) / prefillMs,
                prefillTokensPerSecond: handedOffTokens / (prefillMs / 1000),
                timeToFirstTokenMs: median(runs.map((run) => run.timings.timeToFirstTokenMs)),
                handoffGBps: kvBytes / (handoffMs * 1e6),
                samples: runs.map((run) => ({ ...run.timings }))
            };
        });
        printTable(
            `Handoff against prefill, small model, split mode, states through ${engine.stateExchange.kind} (median of ${NUM_REPETITIONS}, ${engine.backend})`,
            [
                { header: "prompt", cell: (r: LengthResult) => `${r.promptTokens} tok` },
                { header: "handed off", cell: (r) => `${r.handedOffTokens} tok = ${formatBytes(r.kvBytes)}` },
                { header: "prefill", cell: (r) => `${formatNumber(r.prefillMs, 0)} ms` },
                { header: "prefill rate", cell: (r) => `${formatNumber(r.prefillTokensPerSecond, 0)} tok/s` },
                { header: "handoff", cell: (r) => `${formatNumber(r.handoffMs, 1)} ms` },
                { header: "handoff ÷ prefill", cell: (r) => `${formatNumber(r.handoffPercentOfPrefill, 2)} %` },
                { header: "handoff rate", cell: (r) => `${formatNumber(r.handoffGBps, 2)} GB/s` },
                { header: "TTFT", cell: (r) => `${formatNumber(r.timeToFirstTokenMs, 0)} ms` }
            ],
            results
        );
        console.log(
            "handoff = export from prefill, page writes and seals, manifest verification (checksums), assembly and load into decode."
        );
        return { backend: engine.backend, stateExchange: engine.stateExchange.kind, kvBytesPerToken, results };
    } finally {
        await engine.dispose();
    }
}

export const handoffBench: Benchmark = {
    name: "handoff",
    description: "Prefill→decode handoff through pages against prefill time, small model, split mode; memory against files",
    async run(): Promise<BenchFigures> {
        const modelPath = ensureGeneratedModel("small");
        const engine = await measure(modelPath, "auto");
        // The file path as the baseline, in the same run: what the prebuilt binary does, and this one with stateExchange "file".
        const files = engine.stateExchange === "file" ? undefined : await measure(modelPath, "file");
        if (files !== undefined) {
            printTable(
                `Handoff through memory against through files, same binary (${engine.backend}), median of ${NUM_REPETITIONS}`,
                [
                    { header: "prompt", cell: (r: { memory: LengthResult; file: LengthResult }) => `${r.memory.promptTokens} tok` },
                    {
                        header: "through files",
                        cell: (r) => `${formatNumber(r.file.handoffMs, 1)} ms = ${formatNumber(r.file.handoffGBps, 2)} GB/s`
                    },
                    {
                        header: "through memory",
                        cell: (r) => `${formatNumber(r.memory.handoffMs, 1)} ms = ${formatNumber(r.memory.handoffGBps, 2)} GB/s`
                    },
                    { header: "memory ÷ files (rate)", cell: (r) => `${formatNumber(r.memory.handoffGBps / r.file.handoffGBps, 2)}×` }
                ],
                engine.results.map((memory, index) => ({ memory, file: files.results[index]! }))
            );
        }
        return {
            backend: engine.backend,
            stateExchange: engine.stateExchange,
            threads: BENCH_THREADS,
            contextSize: CONTEXT_SIZE,
            pageTokens: PAGE_TOKENS,
            kvBytesPerToken: engine.kvBytesPerToken,
            numRepetitions: NUM_REPETITIONS,
            unit: "ms, tokens/s, GB/s (1e9 bytes/s)",
            lengths: engine.results,
            ...(files === undefined
                ? {}
                : {
                      throughFiles: files.results,
                      memoryOverFilesRate: engine.results.map((memory, index) => memory.handoffGBps / files.results[index]!.handoffGBps)
                  })
        };
    }
};
