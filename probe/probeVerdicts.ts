// The verdicts, as pure functions of what was sent and what came back. A finding is evidence
// that the endpoint leaks or mis-serves; inconclusive says what kept the probe from telling.
import type { Exchange } from "./EndpointClient.js";
import { findMarkers } from "./probeMarkers.js";
import type { SweepStep } from "./probePlan.js";

export type Verdict = "pass" | "finding" | "inconclusive";

export interface Judgement {
    readonly verdict: Verdict;
    readonly reason: string;
}

const RANK: Readonly<Record<Verdict, number>> = { pass: 0, inconclusive: 1, finding: 2 };

/** The worst of several judgements (finding over inconclusive over pass), their reasons joined; pass when there are none. */
export function worstOf(judgements: readonly Judgement[], passReason = "nothing to judge"): Judgement {
    if (judgements.length === 0) {
        return { verdict: "pass", reason: passReason };
    }
    const verdict = judgements.reduce<Verdict>((worst, next) => (RANK[next.verdict] > RANK[worst] ? next.verdict : worst), "pass");
    const reasons = judgements.filter((judgement) => judgement.verdict === verdict).map((judgement) => judgement.reason);
    return { verdict, reason: [...new Set(reasons)].join("; ") };
}

/** A finding when `text` gives away any of the other identity's markers; undefined when it gives none. */
export function judgeForeignMarkers(text: string, foreignMarkers: readonly string[]): Judgement | undefined {
    const found = findMarkers(text, foreignMarkers);
    return found.length === 0
        ? undefined
        : {
              verdict: "finding",
              reason: `the answer contains the other identity's marker${found.length > 1 ? "s" : ""} ${found.join(", ")}`
          };
}

function describeStatus(exchange: Exchange): string {
    if (exchange.status === 0) {
        return `no answer (${exchange.failure ?? "aborted"})`;
    }
    const error =
        exchange.errorCode || exchange.errorMessage ? ` ${exchange.errorCode ?? ""} ${exchange.errorMessage ?? ""}`.trimEnd() : "";
    return `${exchange.status}${error}`;
}

/** Statuses that say nothing about the window: no answer, or a rate limit. */
function unjudgeable(exchange: Exchange): Judgement | undefined {
    if (exchange.status === 0 || exchange.status === 429) {
        return { verdict: "inconclusive", reason: `${describeStatus(exchange)}: the step could not be judged` };
    }
    return undefined;
}

/**
 * One sweep step's status. Within the window: a 200, whose count of prompt tokens is not far
 * below what was sent (else the server cut the prompt). Over it: a 400; a 200 is a finding
 * unless the server's own count shows the prompt fit after all; any other error is a finding.
 */
export function judgeSweepStep(step: SweepStep, exchange: Exchange, window: number): Judgement {
    const skipped = unjudgeable(exchange);
    if (skipped !== undefined) {
        return skipped;
    }
    const counted = exchange.promptTokens;
    if (step.expect === "served") {
        if (exchange.status === 200) {
            if (counted !== undefined && counted < step.promptTokens * 0.5) {
                return {
                    verdict: "finding",
                    reason: `truncation: about ${step.promptTokens} prompt tokens sent, the server counted ${counted}`
                };
            }
            return { verdict: "pass", reason: `${step.label}: served (200${counted === undefined ? "" : `, ${counted} prompt tokens`})` };
        }
        if (exchange.status === 400) {
            return {
                verdict: "inconclusive",
                reason: `${step.label}: about ${step.promptTokens} tokens refused with ${describeStatus(exchange)}: the window served is smaller than ${window}`
            };
        }
        return { verdict: "finding", reason: `${step.label}: an error that is not 400 within the window: ${describeStatus(exchange)}` };
    }
    if (exchange.status === 400) {
        return { verdict: "pass", reason: `${step.label}: refused with 400` };
    }
    if (exchange.status === 200) {
        if (counted !== undefined && counted <= window) {
            return {
                verdict: "inconclusive",
                reason: `${step.label}: served, but the server counted ${counted} prompt tokens, within the ${window}-token window (the estimate overshot)`
            };
        }
        const cut = counted !== undefined && counted < step.promptTokens * 0.8 ? `, and it counted only ${counted} tokens: truncation` : "";
        return {
            verdict: "finding",
            reason: `${step.label}: a 200 where a 400 was due: about ${step.promptTokens} prompt tokens over a ${window}-token window were served${cut}`
        };
    }
    return { verdict: "finding", reason: `${step.label}: an error that is not 400 over the window: ${describeStatus(exchange)}` };
}

/**
 * Truncation judged from the answers: each served step asked for its own start marker. A short
 * prompt whose marker is recalled and a long one whose marker is not means the start of the long
 * one was dropped. A model that recalls none (an untrained or small one) cannot tell.
 */
export function judgeTruncation(served: readonly { step: SweepStep; exchange: Exchange; startMarker: string }[]): Judgement {
    const answered = served.filter((entry) => entry.exchange.status === 200);
    if (answered.length === 0) {
        return { verdict: "inconclusive", reason: "no prompt within the window was served" };
    }
    const recalled = answered.map((entry) => findMarkers(entry.exchange.text, [entry.startMarker]).length > 0);
    if (!recalled.some(Boolean)) {
        return {
            verdict: "inconclusive",
            reason: "the model repeats no start marker, even of its own short prompt (an untrained or small model): truncation cannot be read from its answers"
        };
    }
    const firstRecalled = recalled.indexOf(true);
    const forgotten = answered.filter((entry, index) => index > firstRecalled && !recalled[index]);
    if (forgotten.length > 0) {
        return {
            verdict: "finding",
            reason: `truncation: the start marker is recalled at ${answered[firstRecalled]!.step.promptTokens} tokens and ignored at ${forgotten
                .map((entry) => entry.step.promptTokens)
                .join(", ")} tokens, within the window`
        };
    }
    return { verdict: "pass", reason: `the start marker is recalled in every served prompt (${answered.length})` };
}

/** Identity B asked for, or to continue, something only A sent: a 200 without A's markers passes. */
export function judgeAsk(exchange: Exchange, foreignMarkers: readonly string[]): Judgement {
    const leaked = judgeForeignMarkers(exchange.text, foreignMarkers);
    if (leaked !== undefined) {
        return leaked;
    }
    if (exchange.status !== 200) {
        return { verdict: "inconclusive", reason: `${describeStatus(exchange)}: no answer to check` };
    }
    return { verdict: "pass", reason: "the answer holds none of the other identity's markers" };
}

/**
 * How far a sound server's log-probabilities may move between identical greedy requests and
 * still count as the same answer, at least (ten times the short question's own movement where
 * that is more). llama-server's move by up to about 0.001 between a prompt evaluated whole and
 * the same prompt from its cache; the 2026 configuration's stale pages moved the first token's
 * by 0.02–0.05 on the test's model.
 */
export const LOGPROB_TOLERANCE = 5e-3;

/**
 * B asked the same two questions at temperature 0 three times each: after A's document, after
 * the same document again, and after a different one. A greedy answer is a function of its
 * prompt; on a sound server neither changes. The short question is the control: when its
 * answers vary too, the server's greedy answers vary anyway (batching, a sampler that is not
 * greedy) and a change says nothing. When only the long question's answers vary, long prompts
 * are served over state that other requests left, the 2026 incident's signature.
 * Where the server gave the chosen tokens' log-probabilities, they are compared as well: a
 * small model's greedy text can hold over stale state its log-probabilities do not.
 */
export function judgeDivergence(short: readonly Exchange[], long: readonly Exchange[]): Judgement {
    const unanswered = [...short, ...long].find((exchange) => exchange.status !== 200);
    if (unanswered !== undefined) {
        return { verdict: "inconclusive", reason: `B's questions were not all answered: ${describeStatus(unanswered)}` };
    }
    const numAnswers = short.length + long.length;
    const same = (answers: readonly Exchange[]): boolean => answers.every((answer) => answer.text === answers[0]!.text);
    if (!same(short)) {
        return {
            verdict: "inconclusive",
            reason: "B's greedy answers to its short question vary between runs: answers at temperature 0 are not repeatable here, so a change cannot be traced to A"
        };
    }
    const shortSpread = logprobSpread(short);
    const tolerance = Math.max(LOGPROB_TOLERANCE, 10 * (shortSpread ?? 0));
    if (!same(long)) {
        const tie = nearTieSplit(long, tolerance);
        if (tie !== undefined) {
            return {
                verdict: "pass",
                reason:
                    `B's long answers part at token ${tie.index + 1}, where the top two candidates were ${tie.gap.toPrecision(3)} apart, ` +
                    `and every token before it scored the same within ${tolerance.toPrecision(3)}: a near tie that float rounding flips, not state other requests left (${numAnswers} answers)`
            };
        }
        const afterSame = long[0]!.text === long[1]!.text;
        return {
            verdict: "finding",
            reason: afterSame
                ? "B's greedy answer to its long prompt changed when A's document changed (and not when it stayed the same), while its short prompt's answer never changed: B's answer depends on A's data"
                : "B's greedy answer to its long prompt changed from run to run while its short prompt's answer never did: long prompts are served over state other requests left (stale KV)"
        };
    }
    const longSpread = logprobSpread(long);
    if (shortSpread === undefined || longSpread === undefined) {
        return {
            verdict: "pass",
            reason: `B's greedy answers are the same whatever A sent before (${numAnswers} answers; no log-probabilities to compare)`
        };
    }
    if (longSpread > tolerance) {
        return {
            verdict: "finding",
            reason:
                `B's greedy answer to its long prompt kept its text, but its tokens' log-probabilities moved by up to ${longSpread.toPrecision(3)} ` +
                `from run to run while its short prompt's moved by ${shortSpread.toPrecision(3)} (tolerance ${tolerance.toPrecision(3)}): ` +
                "long prompts are served over state other requests left (stale KV)"
        };
    }
    return {
        verdict: "pass",
        reason: `B's greedy answers and their log-probabilities are the same whatever A sent before (${numAnswers} answers; the long prompt's moved by ${longSpread.toPrecision(3)}, within ${tolerance.toPrecision(3)})`
    };
}

/**
 * The most any token's log-probability differs between answers, over the first `numTokens`
 * tokens (by default all that every answer lists); undefined when an answer has none.
 */
export function logprobSpread(answers: readonly Exchange[], numTokens?: number): number | undefined {
    const lists = answers.map((answer) => answer.scoredTokens);
    if (lists.length === 0 || lists.some((list) => list === undefined || list.length === 0)) {
        return undefined;
    }
    const upTo = Math.min(numTokens ?? Infinity, ...lists.map((list) => list!.length));
    let spread = 0;
    for (let index = 0; index < upTo; index++) {
        const values = lists.map((list) => list![index]!.logprob);
        spread = Math.max(spread, Math.max(...values) - Math.min(...values));
    }
    return spread;
}

/**
 * Whether every answer whose text differs from the first parts from it at a near tie: the same
 * tokens, scored the same within `tolerance`, up to a token where both answers' top two
 * candidates were within `tolerance` of each other. The first such token and the widest of those
 * gaps; undefined when any answer lacks scores or parts otherwise.
 */
export function nearTieSplit(answers: readonly Exchange[], tolerance: number): { index: number; gap: number } | undefined {
    const first = answers[0]!;
    let split: { index: number; gap: number } | undefined;
    for (const answer of answers.slice(1)) {
        if (answer.text === first.text) {
            continue;
        }
        const [a, b] = [first.scoredTokens, answer.scoredTokens];
        if (a === undefined || b === undefined) {
            return undefined;
        }
        const index = a.findIndex((scored, position) => b[position] !== undefined && b[position]!.token !== scored.token);
        if (index < 0 || (logprobSpread([first, answer], index) ?? Infinity) > tolerance) {
            return undefined;
        }
        const gaps = [a[index]!, b[index]!].map((scored) => (scored.runnerUp === undefined ? Infinity : scored.logprob - scored.runnerUp));
        const gap = Math.max(...gaps);
        if (gap > tolerance) {
            return undefined;
        }
        split = { index: Math.min(index, split?.index ?? index), gap: Math.max(gap, split?.gap ?? 0) };
    }
    return split;
}

/**
 * After A's cancelled request, B's question again: no A markers, and (where greedy answers are
 * repeatable, as the divergence probe showed) the same answer as before the race.
 */
export function judgeCancelRace(
    cancelled: Exchange & { readonly aborted: boolean },
    after: Exchange,
    baseline: Exchange | undefined,
    foreignMarkers: readonly string[]
): Judgement {
    const leaked = judgeForeignMarkers(after.text, foreignMarkers);
    if (leaked !== undefined) {
        return leaked;
    }
    if (!cancelled.aborted) {
        return { verdict: "inconclusive", reason: `A's request was answered before it could be cancelled: ${describeStatus(cancelled)}` };
    }
    if (after.status !== 200) {
        return { verdict: "inconclusive", reason: `B's question after the race was not answered: ${describeStatus(after)}` };
    }
    if (baseline === undefined) {
        return {
            verdict: "pass",
            reason: "B's answer after the race holds none of A's markers (its text could not be compared: no repeatable baseline)"
        };
    }
    if (after.text !== baseline.text) {
        return { verdict: "finding", reason: "B's greedy answer changed after A's cancelled request: A's prefill reached B" };
    }
    return { verdict: "pass", reason: "B's answer after the race is the same as before it and holds none of A's markers" };
}
