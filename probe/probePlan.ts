// What a probe run will send, decided before it sends anything: the sweep of prompt lengths
// across the advertised window and every request of every probe, so that the cost can be
// estimated (and agreed to) first and the run never sends more than it said.

export type ProbeId = "calibration" | "window-sweep" | "recall" | "completion" | "divergence" | "cancel-race";

export type Identity = "A" | "B";

/** One step of the sweep: a prompt of about `promptTokens` tokens, and what a sound server does with it. */
export interface SweepStep {
    readonly label: string;
    readonly promptTokens: number;
    /** "served": within the window, a 200 that knows the start marker; "refused": over it, a 400. */
    readonly expect: "served" | "refused";
}

export interface PlannedRequest {
    readonly probe: ProbeId;
    readonly identity: Identity;
    /** Prompt tokens aimed at (the sweep's numbers; the calibration's are small). */
    readonly promptTokens: number;
    /** Completion tokens asked for: the most it can cost. */
    readonly maxTokens: number;
    readonly stream: boolean;
}

export interface CostEstimate {
    readonly numRequests: number;
    readonly promptTokens: number;
    /** At most: every request generating all it asks for (a refused one generates none). */
    readonly completionTokens: number;
}

export class ProbePlanError extends Error {
    readonly code = "probe_plan_invalid";
}

/**
 * Characters of filler in the calibration's second request (its first has none): at most 200 and
 * a quarter of the window, so that even at one token a character it fits.
 */
export function calibrationFillerChars(window: number): number {
    return Math.min(200, Math.floor(window / 4));
}

/** Tokens left between a served prompt and the window, for the template's tokens and the estimate's error. */
export function servedMargin(window: number): number {
    return Math.max(16, Math.ceil(window * 0.03));
}

/**
 * The sweep over a `window`-token context: two prompts inside it (a quarter of it, and as close
 * to it as `maxTokens` of answer allow) and two across it (just over, and half as much again).
 */
export function planSweep(window: number, maxTokens: number): SweepStep[] {
    const near = window - maxTokens - servedMargin(window);
    const quarter = Math.round(window / 4);
    if (!Number.isSafeInteger(window) || window < 64 || near <= quarter) {
        throw new ProbePlanError(
            `A window of ${window} tokens leaves no room for the sweep with --max-tokens ${maxTokens}: a prompt near the window would be ` +
                `${near} tokens, not more than a quarter of it (${quarter}). Pass a smaller --max-tokens or check --window.`
        );
    }
    return [
        { label: "a quarter of the window", promptTokens: quarter, expect: "served" },
        { label: "near the window", promptTokens: near, expect: "served" },
        { label: "just over the window", promptTokens: window + Math.max(16, Math.ceil(window * 0.1)), expect: "refused" },
        { label: "1.5× the window", promptTokens: Math.ceil(window * 1.5), expect: "refused" }
    ];
}

/** The longest prompt the probes send that a sound server serves: the sweep's "near the window". */
export function longestServed(window: number, maxTokens: number): number {
    return planSweep(window, maxTokens)[1]!.promptTokens;
}

/** A's documents in the divergence probe: long enough to fill pages, short enough for any prefill. */
export function seedTokens(window: number): number {
    return Math.round(window * 0.4);
}

/** Every request of a run, in the order sent. */
export function planProbe(window: number, maxTokens: number): PlannedRequest[] {
    const sweep = planSweep(window, maxTokens);
    const long = longestServed(window, maxTokens);
    const request = (probe: ProbeId, identity: Identity, promptTokens: number, tokens = maxTokens, stream = false): PlannedRequest => ({
        probe,
        identity,
        promptTokens,
        maxTokens: tokens,
        stream
    });
    return [
        request("calibration", "A", 40, 1),
        request("calibration", "A", 40 + calibrationFillerChars(window), 1),
        ...sweep.map((step) => request("window-sweep", "A", step.promptTokens)),
        request("recall", "B", 60),
        request("completion", "B", 40),
        // B's same two questions (short, long) three times: after A's document, after the same again, after another one.
        ...[0, 1, 2].flatMap(() => [
            request("divergence", "A", seedTokens(window), 1),
            request("divergence", "B", sweep[0]!.promptTokens),
            request("divergence", "B", long)
        ]),
        request("cancel-race", "A", long, maxTokens, true),
        request("cancel-race", "B", long),
        request("cancel-race", "B", 60)
    ];
}

export function estimateCost(requests: readonly PlannedRequest[]): CostEstimate {
    return {
        numRequests: requests.length,
        promptTokens: requests.reduce((sum, request) => sum + request.promptTokens, 0),
        completionTokens: requests.reduce((sum, request) => sum + request.maxTokens, 0)
    };
}

export function describeCost(cost: CostEstimate): string {
    const n = (value: number): string => value.toLocaleString("en-US");
    return `${n(cost.numRequests)} requests, about ${n(cost.promptTokens)} prompt tokens and at most ${n(cost.completionTokens)} completion tokens`;
}
