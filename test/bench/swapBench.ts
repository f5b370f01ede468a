import type { ChatMessage } from "../../contract/engineProtocol.js";
import { workspaceId } from "../../engine/core/ids.js";
import { EngineService, type TurnResult } from "../../engine/service/EngineService.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { BENCH_THREADS, benchEngineConfig, repetitionsFromEnvironment } from "./benchPrompt.js";
import { formatNumber, median, printTable, type Benchmark, type BenchFigures } from "./benchUtils.js";

const NUM_TURNS = 12;
/** The turn measured (1-based): W was swapped out before it by another workspace's turn. */
const MEASURED_TURN = 10;
const ANSWER_TOKENS = 64;
const CONTEXT_SIZE = 2048;
const PAGE_TOKENS = 256;
/** W's swapped KV, V's, and a recompute's handoff, with room to spare. */
const NUM_PAGES = 3 * (CONTEXT_SIZE / PAGE_TOKENS);
const NUM_REPETITIONS = repetitionsFromEnvironment(3);

/** Short, so each turn's new tokens (with the template's) are evaluated in place after the history, not through prefill. */
function userText(turn: number): string {
    return `Turn ${turn}: ${turn * 7} tokens?`;
}

let nextRequest = 0;

interface TimedTurn {
    readonly result: TurnResult;
    /** From the chat() call to the first streamed text (or to the answer, if no text streamed), ms. */
    readonly timeToFirstTextMs: number;
    readonly durationMs: number;
}

async function timedTurn(service: EngineService, workspace: string, messages: readonly ChatMessage[]): Promise<TimedTurn> {
    const startedAt = performance.now();
    let firstTextAt: number | undefined;
    const result = await service.chat(
        { requestId: `bench-swap-${nextRequest++}`, workspace, messages, sampling: { temperature: 0, maxTokens: ANSWER_TOKENS } },
        (event) => {
            if (event.type === "text") {
                firstTextAt ??= performance.now();
            }
        }
    );
    const endedAt = performance.now();
    return { result, timeToFirstTextMs: (firstTextAt ?? endedAt) - startedAt, durationMs: endedAt - startedAt };
}

/** A workspace's conversation, kept as a host keeps it. */
class Chat {
    readonly messages: ChatMessage[] = [];

    constructor(readonly workspace: string) {}

    async turn(service: EngineService, turn: number): Promise<TimedTurn> {
        const messages: ChatMessage[] = [...this.messages, { role: "user", content: userText(turn) }];
        const timed = await timedTurn(service, this.workspace, messages);
        this.messages.push(messages.at(-1)!, { role: "assistant", content: timed.result.text });
        return timed;
    }
}

function leadingEqual(a: readonly number[], b: readonly number[]): number {
    let count = 0;
    while (count < a.length && count < b.length && a[count] === b[count]) {
        count++;
    }
    return count;
}

function residency(service: EngineService, workspace: string): string {
    return service.engine.workspaces().find((record) => record.id === workspace)?.residency.kind ?? "unknown";
}

interface Repetition {
    /** W's turn 10 after V's turn swapped it out: swapped back in from pages. */
    readonly swappedInMs: number;
    /** The same conversation, as a new workspace: everything evaluated again (rendered from the messages' text). */
    readonly recomputeMs: number;
    /** W's exact turn-10 prompt tokens as a new workspace through KvEngine.generate (call → first onToken). */
    readonly sameTokensRecomputeMs: number;
    /**
     * Leading tokens of that recompute's answer equal to W's turn-10 answer as W's KV holds it (greedy), and how many
     * W's KV holds. Fewer means the two KVs differ numerically (W's was built turn by turn, the recompute's in one prefill).
     */
    readonly sameTokensAnswerPrefix: number;
    readonly heldAnswerTokens: number;
    /** W's turn 9 and 11, resident: for scale. */
    readonly residentBeforeMs: number;
    readonly residentAfterMs: number;
    readonly swappedInPromptTokens: number;
    readonly swappedInCachedTokens: number;
    readonly swappedInEvaluatedTokens: number;
    readonly recomputePromptTokens: number;
    readonly recomputeCachedTokens: number;
    readonly swapInsDuringTurn: number;
    readonly swapOutsDuringTurn: number;
    /** Whether the recompute from the messages' text answered W's text (its prompt has other tokens, so it may not). */
    readonly sameAnswer: boolean;
}

async function runRepetition(service: EngineService, index: number): Promise<Repetition> {
    const { engine } = service;
    const w = new Chat(`bench-swap-w${index}`);
    const turns: TimedTurn[] = [];
    for (let turn = 1; turn < MEASURED_TURN; turn++) {
        turns.push(await w.turn(service, turn));
    }

    // V's turn takes the only decode sequence: W goes out to pages.
    const swapOutsBefore = engine.counters.swapOuts;
    await new Chat(`bench-swap-v${index}`).turn(service, 1);
    if (engine.counters.swapOuts !== swapOutsBefore + 1 || residency(service, w.workspace) !== "swapped") {
        throw new Error(
            `V's turn did not swap W out to pages (swap-outs ${swapOutsBefore} → ${engine.counters.swapOuts}, W ${residency(service, w.workspace)})`
        );
    }

    // W's turn 10: V goes out, W comes back in from its pages.
    const swapInsBefore = engine.counters.swapIns;
    const swapOutsBeforeTurn = engine.counters.swapOuts;
    const measured = await w.turn(service, MEASURED_TURN);
    turns.push(measured);
    const swapInsDuringTurn = engine.counters.swapIns - swapInsBefore;
    if (swapInsDuringTurn !== 1 || measured.result.usage.cachedPromptTokens === 0) {
        throw new Error(
            `W's turn ${MEASURED_TURN} swapped in ${swapInsDuringTurn} time(s) and reused ${measured.result.usage.cachedPromptTokens} ` +
                "prompt tokens; the benchmark needs 1 swap-in and a reused history"
        );
    }
    const swapOutsDuringTurn = engine.counters.swapOuts - swapOutsBeforeTurn;

    // W's turn-10 prompt and answer, as its KV holds them after turn 10 (a length-stopped answer's last token is not held).
    const held = engine.workspaces().find((workspace) => workspace.id === w.workspace)?.heldTokens ?? [];
    const promptTokens = held.slice(0, measured.result.usage.promptTokens);
    const answerHeld = held.slice(measured.result.usage.promptTokens);
    for (let turn = MEASURED_TURN + 1; turn <= NUM_TURNS; turn++) {
        turns.push(await w.turn(service, turn));
    }
    await service.forgetWorkspace(w.workspace);

    // The same turn-10 conversation as a new workspace R, in the same position: one idle one-turn
    // workspace (V2) holds the decode sequence and goes out to pages first, as V did for W.
    const extra = [`bench-swap-v${index}`];
    const afterIdleTurn = async (name: string): Promise<void> => {
        extra.push(name);
        await new Chat(name).turn(service, 1);
    };
    await afterIdleTurn(`bench-swap-v2-${index}`);
    const conversation = w.messages.slice(0, 2 * MEASURED_TURN - 1);
    const recompute = await timedTurn(service, `bench-swap-r${index}`, conversation);
    extra.push(`bench-swap-r${index}`);
    if (recompute.result.usage.cachedPromptTokens !== 0) {
        throw new Error(
            `a new workspace reused ${recompute.result.usage.cachedPromptTokens} prompt tokens; the benchmark needs a full recompute`
        );
    }

    // Rendering from text tokenizes the answers afresh (more tokens than were sampled): the same again with W's exact tokens.
    await service.forgetWorkspace(`bench-swap-r${index}`);
    await afterIdleTurn(`bench-swap-v3-${index}`);
    const exact = workspaceId(`bench-swap-x${index}`);
    const exactStartedAt = performance.now();
    let exactFirstAt: number | undefined;
    const exactResult = await engine.generate({
        workspace: exact,
        promptTokens,
        maxTokens: ANSWER_TOKENS,
        onToken: () => {
            exactFirstAt ??= performance.now();
        }
    });
    await engine.forgetWorkspace(exact);
    if (exactResult.numReusedTokens !== 0) {
        throw new Error(`a new workspace reused ${exactResult.numReusedTokens} prompt tokens; the benchmark needs a full recompute`);
    }

    for (const workspace of extra) {
        await service.forgetWorkspace(workspace);
    }
    return {
        swappedInMs: measured.timeToFirstTextMs,
        recomputeMs: recompute.timeToFirstTextMs,
        sameTokensRecomputeMs: (exactFirstAt ?? performance.now()) - exactStartedAt,
        sameTokensAnswerPrefix: leadingEqual(answerHeld, exactResult.tokens),
        heldAnswerTokens: answerHeld.length,
        residentBeforeMs: turns[MEASURED_TURN - 2]!.timeToFirstTextMs,
        residentAfterMs: turns[MEASURED_TURN]!.timeToFirstTextMs,
        swappedInPromptTokens: measured.result.usage.promptTokens,
        swappedInCachedTokens: measured.result.usage.cachedPromptTokens,
        swappedInEvaluatedTokens: measured.result.usage.evaluatedPromptTokens,
        recomputePromptTokens: recompute.result.usage.promptTokens,
        recomputeCachedTokens: recompute.result.usage.cachedPromptTokens,
        swapInsDuringTurn,
        swapOutsDuringTurn,
        sameAnswer: recompute.result.text === measured.result.text
    };
}

export const swapBench: Benchmark = {
    name: "swap",
    description: `Time to first token of turn ${MEASURED_TURN} of a ${NUM_TURNS}-turn chat swapped out and back in, against a full recompute, small model, split mode, 1 decode sequence`,
    async run(): Promise<BenchFigures> {
        const service = await EngineService.start(
            benchEngineConfig(ensureGeneratedModel("small"), CONTEXT_SIZE, PAGE_TOKENS, { numPages: NUM_PAGES })
        );
        try {
            const { engine } = service;
            if (engine.mode.effective !== "split") {
                throw new Error(`the engine runs ${engine.mode.effective} although split was asked for: ${engine.mode.reason}`);
            }
            console.log(
                `engine: ${engine.backend}; window ${engine.window.limit} tokens, 1 decode sequence, ${NUM_PAGES} pages of ${PAGE_TOKENS} tokens; ` +
                    `answers of up to ${ANSWER_TOKENS} tokens, in-place threshold ${engine.config.inPlacePrefillTokens} tokens`
            );
            const repetitions: Repetition[] = [];
            for (let index = 0; index < NUM_REPETITIONS; index++) {
                const repetition = await runRepetition(service, index);
                repetitions.push(repetition);
                console.log(
                    `  repetition ${index + 1}/${NUM_REPETITIONS}: swapped in ${formatNumber(repetition.swappedInMs, 0)} ms, ` +
                        `recompute ${formatNumber(repetition.recomputeMs, 0)} ms (${repetition.recomputePromptTokens} prompt tokens), ` +
                        `same tokens ${formatNumber(repetition.sameTokensRecomputeMs, 0)} ms, ` +
                        `resident ${formatNumber(repetition.residentBeforeMs, 0)} / ${formatNumber(repetition.residentAfterMs, 0)} ms`
                );
            }

            const ms = (value: number): string => `${formatNumber(value, 0)} ms`;
            const rows = repetitions.map((repetition, index) => ({ label: `${index + 1}`, ...repetition }));
            const mid = <K extends keyof Repetition>(key: K): number => median(repetitions.map((repetition) => Number(repetition[key])));
            const summary = {
                swappedInMs: mid("swappedInMs"),
                recomputeMs: mid("recomputeMs"),
                residentBeforeMs: mid("residentBeforeMs"),
                residentAfterMs: mid("residentAfterMs"),
                sameTokensRecomputeMs: mid("sameTokensRecomputeMs"),
                recomputeOverSwappedIn: mid("recomputeMs") / mid("swappedInMs"),
                sameTokensRecomputeOverSwappedIn: mid("sameTokensRecomputeMs") / mid("swappedInMs")
            };
            type Row = (typeof rows)[number];
            printTable(
                `Turn ${MEASURED_TURN} of ${NUM_TURNS}: time to first text after a swap-out, against a full recompute (${engine.backend})`,
                [
                    { header: "repetition", cell: (r: Row) => r.label },
                    { header: "prompt", cell: (r) => `${r.swappedInPromptTokens} tok` },
                    { header: "swapped in: TTFT", cell: (r) => ms(r.swappedInMs) },
                    { header: "cached / evaluated", cell: (r) => `${r.swappedInCachedTokens} / ${r.swappedInEvaluatedTokens}` },
                    { header: "swap-ins / outs", cell: (r) => `${r.swapInsDuringTurn} / ${r.swapOutsDuringTurn}` },
                    { header: "recompute: TTFT", cell: (r) => `${ms(r.recomputeMs)} (${r.recomputePromptTokens} tok)` },
                    { header: "÷ swapped in", cell: (r) => `${formatNumber(r.recomputeMs / r.swappedInMs, 1)}×` },
                    { header: "same tokens: TTFT", cell: (r) => ms(r.sameTokensRecomputeMs) },
                    { header: "÷ swapped in ", cell: (r) => `${formatNumber(r.sameTokensRecomputeMs / r.swappedInMs, 1)}×` },
                    { header: "same answer", cell: (r) => `${r.sameTokensAnswerPrefix} of ${r.heldAnswerTokens} tok` },
                    { header: "resident turn 9 / 11", cell: (r) => `${ms(r.residentBeforeMs)} / ${ms(r.residentAfterMs)}` }
                ],
                rows
            );
            console.log(
                `median: swapped in ${ms(summary.swappedInMs)}, recompute ${ms(summary.recomputeMs)} ` +
                    `(${formatNumber(summary.recomputeOverSwappedIn, 1)}×), same tokens ${ms(summary.sameTokensRecomputeMs)} ` +
                    `(${formatNumber(summary.sameTokensRecomputeOverSwappedIn, 1)}×); resident turns ${ms(summary.residentBeforeMs)} / ${ms(summary.residentAfterMs)}.\n` +
                    "TTFT: from the chat() call to the first streamed text. Swapped in: W's own KV loaded from its pages (after V, idle, goes out " +
                    "to pages), then the turn's new tokens evaluated (in place when at most the in-place threshold + 1). Recompute: the same " +
                    "messages as a new workspace (after another idle one-turn workspace goes out to pages), rendered from their text, whose " +
                    "answers tokenize to more tokens than were sampled; the whole prompt is evaluated by prefill and handed off.\n" +
                    "same tokens: W's exact turn-10 prompt tokens as a new workspace through KvEngine.generate (call → first token), in the same " +
                    "position; same answer: how many leading tokens of its answer equal W's turn-10 answer as W's KV holds it (greedy)."
            );
            return {
                backend: engine.backend,
                threads: BENCH_THREADS,
                contextSize: CONTEXT_SIZE,
                pageTokens: PAGE_TOKENS,
                answerTokens: ANSWER_TOKENS,
                numTurns: NUM_TURNS,
                measuredTurn: MEASURED_TURN,
                numRepetitions: NUM_REPETITIONS,
                unit: "ms",
                summary,
                repetitions
            };
        } finally {
            await service.dispose();
        }
    }
};
