import type { EngineCounters, GenerateRequest, RequestTimings } from "../engineTypes.js";
import type { DraftCounts, SamplingOptions, SequenceSlot, TokenProbabilities } from "../runtime/SequenceSlot.js";
import { GrammarBudgetError, MAX_GRAMMAR_TOKEN_MS } from "./GrammarBudgetError.js";
import type { RequestRecord } from "./RequestRecord.js";

export const GREEDY: SamplingOptions = { temperature: 0 };

/** What a request's decode produced: its tokens, why it stopped, and the tokens speculation drafted for it. */
export interface DecodeOutcome {
    readonly tokens: readonly number[];
    readonly finishReason: "stop" | "length";
    readonly drafts: DraftCounts;
}

/**
 * The decode loop of one request: evaluates `tokens` (the prompt's tail the sequence does not hold
 * yet) and samples until an end-of-generation token, a stop the consumer asks for, or `maxTokens`.
 * A cancel takes effect within one step: every token first asks whether the request still lives.
 * Under a grammar, a token after the first (which waits for the prompt) that took longer than
 * MAX_GRAMMAR_TOKEN_MS ends the turn with a GrammarBudgetError.
 * `tokenDelayMs` (the streaming demo mode, EngineConfig) waits that long after each token before
 * the next is decoded. Ends the request as finished.
 */
export async function runDecode(
    record: RequestRecord,
    slot: SequenceSlot,
    tokens: readonly number[],
    input: GenerateRequest,
    timings: RequestTimings,
    admittedAt: number,
    counters: EngineCounters,
    tokenDelayMs: number
): Promise<DecodeOutcome> {
    record.enter({ kind: "decoding" });
    const draftsBefore = slot.tokenPredictions;
    const generated: number[] = [];
    let finishReason: "stop" | "length" = "stop";
    let firstTokenAt = performance.now();
    let probabilities: TokenProbabilities | undefined;
    const wantProbabilities =
        input.logprobs === undefined
            ? undefined
            : {
                  top: input.logprobs.top,
                  onToken: (entry: TokenProbabilities) => {
                      probabilities = entry;
                  }
              };
    const grammarBudgetMs = input.sampling?.grammar === undefined ? undefined : MAX_GRAMMAR_TOKEN_MS;
    let askedAt = performance.now();
    for await (const token of slot.generate(tokens, input.sampling ?? GREEDY, wantProbabilities)) {
        record.throwIfEnded();
        const tookMs = performance.now() - askedAt;
        if (grammarBudgetMs !== undefined && generated.length > 0 && tookMs > grammarBudgetMs) {
            throw new GrammarBudgetError(generated.length, tookMs, grammarBudgetMs);
        }
        if (generated.length === 0) {
            firstTokenAt = performance.now();
            timings.timeToFirstTokenMs = firstTokenAt - admittedAt;
        }
        generated.push(token);
        counters.generatedTokens++;
        if (input.onToken?.(token, probabilities) === "stop") {
            break;
        }
        if (generated.length >= input.maxTokens) {
            finishReason = "length";
            break;
        }
        if (tokenDelayMs > 0) {
            await new Promise((resolve) => setTimeout(resolve, tokenDelayMs));
        }
        askedAt = performance.now();
    }
    record.throwIfEnded();
    timings.decodeMs = performance.now() - firstTokenAt;
    record.finish({ kind: "finished", reason: finishReason });
    const draftsAfter = slot.tokenPredictions;
    const drafts = {
        validated: draftsAfter.validated - draftsBefore.validated,
        refuted: draftsAfter.refuted - draftsBefore.refuted
    };
    counters.validatedDraftTokens += drafts.validated;
    counters.refutedDraftTokens += drafts.refuted;
    return { tokens: generated, finishReason, drafts };
}
