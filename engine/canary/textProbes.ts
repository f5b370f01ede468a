import type { CanaryProbeResult } from "../../contract/isolation.js";
import type { TokenProbabilities } from "../runtime/SequenceSlot.js";
import type { MarkerTokens } from "./canaryPrompts.js";
import { longestCommonRun, longestSecretSubstring, MIN_ECHO_CHARS, MIN_ECHO_TOKENS } from "./markerEchoes.js";

/** A raise of a marker token's log probability above the fresh context's that counts as a leak (nats; e¹ ≈ 2.7× likelier). */
export const LOGPROB_LIFT_LIMIT_NATS = 1;

/** What one of B's requests produced, or how it ended. */
export type ProbeOutput =
    | { readonly ok: true; readonly tokens: readonly number[]; readonly text: string; readonly steps: readonly TokenProbabilities[] }
    | { readonly ok: false; readonly error: { readonly code: string; readonly message: string } };

const RANDOM_WEIGHTS_NOTE =
    " This model has random weights and cannot recall text, so this probe shows nothing here; the KV probes carry the check.";

/** text-recall / text-cue: B's answer holds no marker, whole or in part (≥ 3 of its tokens in a row, or ≥ 6 of its secret characters). */
export function probeTextEcho(
    id: "text-recall" | "text-cue",
    title: string,
    output: ProbeOutput,
    markers: readonly MarkerTokens[],
    randomWeights: boolean
): CanaryProbeResult {
    if (!output.ok) {
        return {
            id,
            title,
            outcome: "skipped",
            evidence: `B's request ended with ${output.error.code}: ${output.error.message}`,
            numbers: {}
        };
    }
    let longestRun = 0;
    let longestChars = 0;
    let echoed: string | undefined;
    for (const marker of markers) {
        const run = Math.max(...marker.secretRuns.map((secretTokens) => longestCommonRun(output.tokens, secretTokens)));
        const chars = longestSecretSubstring(output.text, marker.secret);
        longestRun = Math.max(longestRun, run);
        longestChars = Math.max(longestChars, chars);
        if (echoed === undefined && (run >= MIN_ECHO_TOKENS || chars >= MIN_ECHO_CHARS)) {
            echoed = marker.marker;
        }
    }
    const numbers = { numTokensGenerated: output.tokens.length, longestMarkerTokenRun: longestRun, longestSecretChars: longestChars };
    if (echoed !== undefined) {
        return {
            id,
            title,
            outcome: "failed",
            numbers,
            evidence: `B's answer echoes A's marker ${echoed}: ${longestRun} of its tokens in a row, ${longestChars} of its secret characters. Answer: ${JSON.stringify(output.text.slice(0, 200))}`
        };
    }
    return {
        id,
        title,
        outcome: "passed",
        numbers,
        evidence:
            `B's ${output.tokens.length}-token answer holds no marker: at most ${plural(longestRun, "marker token")} in a row (${MIN_ECHO_TOKENS} would count) and ` +
            `${plural(longestChars, "secret character")} (${MIN_ECHO_CHARS} would count).${randomWeights ? RANDOM_WEIGHTS_NOTE : ""}`
    };
}

/**
 * logprobs: after "The secret code is KV-CANARY-", the log probability B gives each marker's first
 * secret token, against the same prompt in a fresh context of its own. B seeing A's KV raises it.
 */
export function probeLogprobs(
    output: ProbeOutput,
    baseline: readonly TokenProbabilities[],
    markers: readonly MarkerTokens[],
    topK: number
): CanaryProbeResult {
    const id = "logprobs";
    const title = "B finds the markers no likelier than a fresh context does";
    if (!output.ok) {
        return {
            id,
            title,
            outcome: "skipped",
            evidence: `B's request ended with ${output.error.code}: ${output.error.message}`,
            numbers: {}
        };
    }
    const first = output.steps[0];
    const fresh = baseline[0];
    if (first === undefined || fresh === undefined) {
        return {
            id,
            title,
            outcome: "skipped",
            evidence: "B generated no token after the cue, so there is no distribution to compare.",
            numbers: {}
        };
    }

    const numbers: Record<string, number> = { topK };
    const findings: string[] = [];
    let failed = false;
    markers.forEach((marker, index) => {
        const name = `marker${index + 1}`;
        if (marker.firstSecretToken === undefined) {
            findings.push(`marker ${index + 1}'s public part tokenizes differently after the cue: not compared`);
            return;
        }
        const inB = first.top.find((entry) => entry.token === marker.firstSecretToken)?.logprob;
        const inFresh = fresh.top.find((entry) => entry.token === marker.firstSecretToken)?.logprob;
        const floorFresh = fresh.top.at(-1)?.logprob ?? Number.NEGATIVE_INFINITY;
        if (inB === undefined) {
            findings.push(
                `marker ${index + 1}'s first secret token is outside B's top ${topK}` +
                    (inFresh === undefined ? " and the fresh context's" : ` (fresh: ${inFresh.toFixed(2)})`)
            );
            return;
        }
        // Outside the fresh top-K, its log probability there is at most the K-th: the lift is at least this.
        const lift = inB - (inFresh ?? floorFresh);
        setFinite(numbers, `${name}LogprobB`, inB);
        if (inFresh !== undefined) {
            setFinite(numbers, `${name}LogprobFresh`, inFresh);
        }
        setFinite(numbers, `${name}LiftNats`, lift);
        if (lift > LOGPROB_LIFT_LIMIT_NATS) {
            failed = true;
        }
        findings.push(
            `marker ${index + 1}'s first secret token: ${inB.toFixed(2)} in B, ${inFresh === undefined ? `below ${floorFresh.toFixed(2)}` : inFresh.toFixed(2)} fresh (lift ${inFresh === undefined ? "≥ " : ""}${lift.toFixed(2)} nats)`
        );
    });

    // How far B's distributions stray from the fresh context's while both chose the same tokens.
    let maxAbsDiff = 0;
    let numStepsCompared = 0;
    for (let step = 0; step < Math.min(output.steps.length, baseline.length); step++) {
        const mine = output.steps[step]!;
        const theirs = baseline[step]!;
        const theirLogprobs = new Map(theirs.top.map((entry) => [entry.token, entry.logprob]));
        for (const entry of mine.top) {
            const other = theirLogprobs.get(entry.token);
            if (other !== undefined && Number.isFinite(other) && Number.isFinite(entry.logprob)) {
                maxAbsDiff = Math.max(maxAbsDiff, Math.abs(entry.logprob - other));
            }
        }
        numStepsCompared++;
        if (mine.token !== theirs.token) {
            break;
        }
    }
    numbers.numStepsCompared = numStepsCompared;
    setFinite(numbers, "maxAbsDiffNats", maxAbsDiff);
    const evidence =
        `${findings.join("; ")}. Largest difference from the fresh context over B's top ${topK} in ${numStepsCompared} steps: ${maxAbsDiff.toFixed(4)} nats` +
        (failed ? `; a lift above ${LOGPROB_LIFT_LIMIT_NATS} nat counts as a leak.` : ".");
    return { id, title, outcome: failed ? "failed" : "passed", evidence, numbers };
}

function plural(count: number, noun: string): string {
    return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function setFinite(numbers: Record<string, number>, name: string, value: number): void {
    if (Number.isFinite(value)) {
        numbers[name] = value;
    }
}
