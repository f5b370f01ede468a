// `npm run bench -- speculation`: speculative decoding against plain decoding, in decode contexts
// made as the engine makes them, on the small model: input lookup (engine config `speculation:
// "input-lookup"`), and a draft model (`"draft-model"`): the model itself (every draft right, at
// the model's own cost: the mechanism's bound) and its Q4_0 twin (the same weights quantized). A
// chat that quotes its context and one that does not. The arms alternate within one run; the
// verdict is each arm's decode rate as a ratio of plain decoding's, with the drafts' acceptance.
import type { LlamaModel } from "node-llama-cpp";
import { roleTuning } from "../../engine/EngineParts.js";
import type { Speculation } from "../../engine/runtime/createTokenPredictors.js";
import { LlamaRoleContext } from "../../engine/runtime/LlamaRoleContext.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import type { LlamaSequenceSlot } from "../../engine/runtime/LlamaSequenceSlot.js";
import type { ProbabilityRequest } from "../../engine/runtime/SequenceSlot.js";
import { PrivateStateDirectory } from "../../engine/runtime/PrivateStateDirectory.js";
import { FileStateExchange } from "../../engine/runtime/FileStateExchange.js";
import { ensureGeneratedModel, ensureQuantizedModel } from "../support/generatedModels.js";
import { BENCH_GPU, BENCH_THREADS, PROMPT_TEXT, repetitionsFromEnvironment } from "./benchPrompt.js";
import { formatNumber, median, printTable, TokenClock, type Benchmark, type BenchFigures } from "./benchUtils.js";

const NUM_GENERATED = 128;
const CONTEXT_SIZE = 1024;
const NUM_REPETITIONS = repetitionsFromEnvironment(3);
/** How the draft models draft: llama-server's shape (a handful ahead), every draft proposed (random weights are never confident). */
const DRAFTING = { maxTokens: 4, minConfidence: 0 } as const;

/** A prompt that quotes itself (what input lookup drafts from), and one whose words do not repeat. */
const WORKLOADS = {
    quoting: `Repeat this paragraph exactly, twice: ${PROMPT_TEXT} Again: ${PROMPT_TEXT}`,
    plain: "Write about the sea, the wind over it, a lighthouse keeper's evening, and what the ships carry."
} as const;
type Workload = keyof typeof WORKLOADS;
const ARMS = ["plain", "input lookup", "draft: the model itself", "draft: its Q4_0 twin"] as const;
type Arm = (typeof ARMS)[number];

interface Run {
    readonly decodeTokensPerSecond: number;
    readonly tokens: readonly number[];
    readonly validated: number;
    readonly refuted: number;
}

/**
 * A difference of two greedy answers that floating point explains: where they part, plain
 * decoding's two likeliest tokens were within this share of each other. A verification step
 * evaluates several tokens in one batch, whose sums llama.cpp orders otherwise than one token's,
 * so a near tie can fall the other way (as in llama.cpp's own speculative decoding).
 */
const NEAR_TIE = 0.01;

/** "yes", or where an answer first parts from the reference and whether that was a near tie (else "NO"). */
function sameTokens(runs: readonly Run[], reference: { readonly tokens: readonly number[]; readonly top2: readonly number[][] }): string {
    let verdict = "yes";
    for (const run of runs) {
        const at = run.tokens.findIndex((token, i) => token !== reference.tokens[i]);
        if (at === -1) {
            continue;
        }
        const [first = 0, second = 0] = reference.top2[at] ?? [];
        if (first === 0 || (first - second) / first > NEAR_TIE) {
            return `NO (token ${at})`;
        }
        verdict = `to a near tie (token ${at}, ${formatNumber((100 * (first - second)) / first, 2)} % apart)`;
    }
    return verdict;
}

/** One greedy answer in a fresh sequence of `context`, with `probabilities` told each token's when given; the sequence is released after. */
async function answer(context: LlamaRoleContext, promptTokens: readonly number[], probabilities?: ProbabilityRequest): Promise<Run> {
    const slot = context.acquireSequence() as LlamaSequenceSlot | undefined;
    if (slot === undefined) {
        throw new Error("the benchmark's context has no free sequence");
    }
    const clock = new TokenClock();
    try {
        for await (const token of slot.generate(promptTokens, { temperature: 0 }, probabilities)) {
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
    readonly arm: Arm;
    readonly tokensPerSecond: number;
    /** This arm's decode rate ÷ plain decoding's, same workload, same run. */
    readonly ratio: number;
    readonly acceptance: number;
    readonly numDrafted: number;
    /** Whether every run gave plain decoding's tokens: "yes", "to a near tie (…)", or "NO (…)". */
    readonly sameTokens: string;
}

export const speculationBench: Benchmark = {
    name: "speculation",
    description: `Speculative decoding (input lookup, a draft model) against plain decoding, small model, ${NUM_GENERATED} greedy tokens, a quoting and a plain prompt`,
    async run(): Promise<BenchFigures> {
        const runtime = await LlamaRuntime.start({ gpu: BENCH_GPU, maxThreads: BENCH_THREADS });
        const stateDirectory = PrivateStateDirectory.create();
        let model: LlamaModel | undefined;
        let twin: LlamaModel | undefined;
        const contexts: LlamaRoleContext[] = [];
        try {
            model = await runtime.loadModel(ensureGeneratedModel("small"));
            twin = await runtime.loadModel(ensureQuantizedModel("small", "q4_0"));
            const create = async (speculation: Speculation | undefined): Promise<LlamaRoleContext> => {
                const context = await LlamaRoleContext.create(
                    model!,
                    {
                        role: "decode",
                        contextSize: CONTEXT_SIZE,
                        numSequences: 1,
                        flashAttention: true,
                        threads: BENCH_THREADS,
                        speculation,
                        ...roleTuning("decode")
                    },
                    new FileStateExchange(stateDirectory)
                );
                contexts.push(context);
                return context;
            };
            const arms: Record<Arm, LlamaRoleContext> = {
                plain: await create(undefined),
                "input lookup": await create("input-lookup"),
                "draft: the model itself": await create({ draftModel: model, ...DRAFTING }),
                "draft: its Q4_0 twin": await create({ draftModel: twin, ...DRAFTING })
            };
            const rows: Row[] = [];
            for (const workload of Object.keys(WORKLOADS) as Workload[]) {
                const prompt = model.tokenize(WORKLOADS[workload]);
                const runs = Object.fromEntries(ARMS.map((arm) => [arm, [] as Run[]])) as Record<Arm, Run[]>;
                for (let repetition = 0; repetition < NUM_REPETITIONS; repetition++) {
                    // rotate which arm goes first, so a slow moment of the machine falls on each in turn
                    const order = ARMS.map((_, i) => ARMS[(i + repetition) % ARMS.length]!);
                    for (const arm of order) {
                        runs[arm].push(await answer(arms[arm], prompt));
                    }
                }
                // plain decoding's answer again, with each step's two likeliest tokens (untimed: the softmax costs)
                const top2: number[][] = [];
                const { tokens } = await answer(arms.plain, prompt, {
                    top: 2,
                    onToken: (entry) => top2.push(entry.top.map((candidate) => Math.exp(candidate.logprob)))
                });
                const reference = { tokens, top2 };
                const plainRate = median(runs.plain.map((run) => run.decodeTokensPerSecond));
                for (const arm of ARMS) {
                    const validated = runs[arm].reduce((sum, run) => sum + run.validated, 0);
                    const refuted = runs[arm].reduce((sum, run) => sum + run.refuted, 0);
                    const rate = median(runs[arm].map((run) => run.decodeTokensPerSecond));
                    rows.push({
                        workload,
                        arm,
                        tokensPerSecond: rate,
                        ratio: rate / plainRate,
                        acceptance: validated + refuted === 0 ? 0 : validated / (validated + refuted),
                        numDrafted: validated + refuted,
                        sameTokens: sameTokens(runs[arm], reference)
                    });
                }
            }
            printTable(
                `Speculative decoding against plain decoding, small model, ${runtime.describe()}, ${NUM_GENERATED} greedy tokens, ` +
                    `drafts of up to ${DRAFTING.maxTokens} (median of ${NUM_REPETITIONS}, arms rotated)`,
                [
                    { header: "prompt", cell: (row: Row) => row.workload, align: "left" },
                    { header: "arm", cell: (row: Row) => row.arm, align: "left" },
                    { header: "decode", cell: (row: Row) => `${formatNumber(row.tokensPerSecond, 1)} tok/s` },
                    { header: "÷ plain", cell: (row: Row) => formatNumber(row.ratio, 2) },
                    { header: "drafts accepted", cell: (row: Row) => `${formatNumber(row.acceptance * 100, 0)} % of ${row.numDrafted}` },
                    { header: "same tokens as plain", cell: (row: Row) => row.sameTokens, align: "left" }
                ],
                rows
            );
            if (rows.some((row) => row.sameTokens.startsWith("NO"))) {
                throw new Error(
                    "speculative decoding changed the greedy tokens where no near tie explains it: it must change only how fast tokens come"
                );
            }
            return { runtime: runtime.describe(), numGenerated: NUM_GENERATED, drafting: DRAFTING, rows };
        } finally {
            for (const context of contexts.reverse()) {
                await context.dispose();
            }
            await twin?.dispose();
            await model?.dispose();
            stateDirectory.dispose();
            await runtime.dispose();
        }
    }
};
