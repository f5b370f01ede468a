// `npm run bench -- speculation`: speculative decoding by input lookup (engine config
// `speculation: "input-lookup"`) against plain decoding, in decode contexts made as the engine makes
// them, on the small model: a chat that quotes its context and one that does not. The arms alternate
// within one run; the verdict is the ratio of their decode rates, with the drafts' acceptance.
import type { LlamaModel } from "node-llama-cpp";
import { LlamaRoleContext } from "../../engine/runtime/LlamaRoleContext.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import type { LlamaSequenceSlot } from "../../engine/runtime/LlamaSequenceSlot.js";
import { PrivateStateDirectory } from "../../engine/runtime/PrivateStateDirectory.js";
import { FileStateExchange } from "../../engine/runtime/FileStateExchange.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { BENCH_GPU, BENCH_THREADS, PROMPT_TEXT, repetitionsFromEnvironment } from "./benchPrompt.js";
import { formatNumber, median, printTable, TokenClock, type Benchmark, type BenchFigures } from "./benchUtils.js";

const NUM_GENERATED = 128;
const CONTEXT_SIZE = 1024;
const NUM_REPETITIONS = repetitionsFromEnvironment(3);

/** A prompt that quotes itself (what input lookup drafts from), and one whose words do not repeat. */
const WORKLOADS = {
    quoting: `Repeat this paragraph exactly, twice: ${PROMPT_TEXT} Again: ${PROMPT_TEXT}`,
    plain: "Write about the sea, the wind over it, a lighthouse keeper's evening, and what the ships carry."
} as const;
type Workload = keyof typeof WORKLOADS;
type Arm = "plain" | "input lookup";

interface Run {
    readonly decodeTokensPerSecond: number;
    readonly tokens: readonly number[];
    readonly validated: number;
    readonly refuted: number;
}

/** One greedy answer in a fresh sequence of `context`; the sequence is released after. */
async function answer(context: LlamaRoleContext, promptTokens: readonly number[]): Promise<Run> {
    const slot = context.acquireSequence() as LlamaSequenceSlot | undefined;
    if (slot === undefined) {
        throw new Error("the benchmark's context has no free sequence");
    }
    const clock = new TokenClock();
    try {
        for await (const token of slot.generate(promptTokens, { temperature: 0 })) {
            clock.onToken(token);
            if (clock.tokens.length >= NUM_GENERATED) {
                break;
            }
        }
        const { validated, refuted } = slot.tokenPredictions;
        return { decodeTokensPerSecond: clock.decodeTokensPerSecond, tokens: clock.tokens, validated, refuted };
    } finally {
        await context.releaseSequence(slot);
    }
}

interface Row {
    readonly workload: Workload;
    readonly plain: number;
    readonly lookup: number;
    readonly acceptance: number;
    readonly numDrafted: number;
    readonly sameTokens: boolean;
}

export const speculationBench: Benchmark = {
    name: "speculation",
    description: `Speculative decoding by input lookup against plain decoding, small model, ${NUM_GENERATED} greedy tokens, a quoting and a plain prompt`,
    async run(): Promise<BenchFigures> {
        const runtime = await LlamaRuntime.start({ gpu: BENCH_GPU, maxThreads: BENCH_THREADS });
        const stateDirectory = PrivateStateDirectory.create();
        let model: LlamaModel | undefined;
        const contexts: LlamaRoleContext[] = [];
        try {
            model = await runtime.loadModel(ensureGeneratedModel("small"));
            const create = async (speculation: "input-lookup" | undefined): Promise<LlamaRoleContext> => {
                const context = await LlamaRoleContext.create(
                    model!,
                    {
                        role: "decode",
                        contextSize: CONTEXT_SIZE,
                        numSequences: 1,
                        flashAttention: true,
                        threads: BENCH_THREADS,
                        speculation
                    },
                    new FileStateExchange(stateDirectory)
                );
                contexts.push(context);
                return context;
            };
            const arms: Record<Arm, LlamaRoleContext> = { plain: await create(undefined), "input lookup": await create("input-lookup") };
            const rows: Row[] = [];
            for (const workload of Object.keys(WORKLOADS) as Workload[]) {
                const prompt = model.tokenize(WORKLOADS[workload]);
                const runs: Record<Arm, Run[]> = { plain: [], "input lookup": [] };
                for (let repetition = 0; repetition < NUM_REPETITIONS; repetition++) {
                    // alternate which arm goes first, so a slow moment of the machine falls on both
                    const order: Arm[] = repetition % 2 === 0 ? ["plain", "input lookup"] : ["input lookup", "plain"];
                    for (const arm of order) {
                        runs[arm].push(await answer(arms[arm], prompt));
                    }
                }
                const drafted = runs["input lookup"];
                const validated = drafted.reduce((sum, run) => sum + run.validated, 0);
                const refuted = drafted.reduce((sum, run) => sum + run.refuted, 0);
                const reference = runs.plain[0]!.tokens;
                rows.push({
                    workload,
                    plain: median(runs.plain.map((run) => run.decodeTokensPerSecond)),
                    lookup: median(drafted.map((run) => run.decodeTokensPerSecond)),
                    acceptance: validated + refuted === 0 ? 0 : validated / (validated + refuted),
                    numDrafted: validated + refuted,
                    sameTokens: [...runs.plain, ...drafted].every((run) => run.tokens.join() === reference.join())
                });
            }
            printTable(
                `Input lookup against plain decoding, small model, ${runtime.describe()}, ${NUM_GENERATED} greedy tokens (median of ${NUM_REPETITIONS}, arms alternated)`,
                [
                    { header: "prompt", cell: (row: Row) => row.workload, align: "left" },
                    { header: "plain", cell: (row: Row) => `${formatNumber(row.plain, 1)} tok/s` },
                    { header: "input lookup", cell: (row: Row) => `${formatNumber(row.lookup, 1)} tok/s` },
                    { header: "lookup ÷ plain", cell: (row: Row) => formatNumber(row.lookup / row.plain, 2) },
                    { header: "drafts accepted", cell: (row: Row) => `${formatNumber(row.acceptance * 100, 0)} % of ${row.numDrafted}` },
                    { header: "same tokens", cell: (row: Row) => (row.sameTokens ? "yes" : "NO") }
                ],
                rows
            );
            if (!rows.every((row) => row.sameTokens)) {
                throw new Error("input lookup changed the greedy tokens: speculation must change only how fast tokens come");
            }
            return { runtime: runtime.describe(), numGenerated: NUM_GENERATED, rows };
        } finally {
            for (const context of contexts.reverse()) {
                await context.dispose();
            }
            await model?.dispose();
            stateDirectory.dispose();
            await runtime.dispose();
        }
    }
};
