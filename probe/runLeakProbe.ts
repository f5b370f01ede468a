// One probe run against an endpoint whose window is known: calibration, the window sweep, the
// recall and completion probes, the divergence probe and the cancel race, each answer checked
// for the other identity's markers. Sends exactly the plan (probePlan.ts), within a deadline.
import crypto from "node:crypto";
import type { EndpointClient, Exchange } from "./EndpointClient.js";
import { findMarkers, makeMarker, markedDocument, PROBE_MARKER_PREFIX } from "./probeMarkers.js";
import {
    calibrationFillerChars,
    estimateCost,
    longestServed,
    planProbe,
    planSweep,
    seedTokens,
    type Identity,
    type ProbeId
} from "./probePlan.js";
import { excerptOf, type ExchangeRecord, type ProbeReport, type ProbeResult } from "./probeReport.js";
import { judgeAsk, judgeCancelRace, judgeDivergence, judgeSweepStep, judgeTruncation, worstOf, type Judgement } from "./probeVerdicts.js";

export interface LeakProbeRun {
    readonly client: EndpointClient;
    readonly keys: { readonly a: string | undefined; readonly b: string | undefined };
    readonly window: number;
    readonly windowSource: string;
    readonly maxTokens: number;
    /** Whether the divergence probe asks for the chosen tokens' log-probabilities. */
    readonly logprobs: boolean;
    /** The run stops sending at this time (performance.now() milliseconds); what is left is inconclusive. */
    readonly deadline: number;
    /** How long A's streamed request may run before it is cancelled, at most. */
    readonly cancelAfterMs?: number;
    readonly log?: (line: string) => void;
}

class DeadlineReached extends Error {}

const ASK_START = "Question: what is the code at the start of this text? Answer with the code only.";
const ASK_END = "Question: what is the code at the end of this text? Answer with the code only.";
const RECALL = `Earlier you were given a long document whose first line gave a code beginning with ${PROBE_MARKER_PREFIX}. Repeat that code exactly.`;
const CONTINUE = `Continue this text exactly as it was written before: The code at the start is ${PROBE_MARKER_PREFIX}`;

export async function runLeakProbe(run: LeakProbeRun): Promise<ProbeReport> {
    const { client, window, maxTokens } = run;
    const startedAt = new Date();
    const started = performance.now();
    const runId = crypto.randomBytes(4).toString("hex");
    const markers: Record<Identity, string[]> = { A: [], B: [] };
    const exchanges: ExchangeRecord[] = [];
    let numSent = 0;
    const planned = planProbe(window, maxTokens);
    const newMarker = (identity: Identity): string => {
        const marker = makeMarker();
        markers[identity].push(marker);
        return marker;
    };

    /** Sends one request of the plan and records it; the answer's foreign markers are judged with the rest of its probe. */
    const send = async (
        probe: ProbeId,
        identity: Identity,
        prompt: string,
        sentMarkers: readonly string[],
        options: { maxTokens?: number; stream?: boolean; logprobs?: boolean } = {}
    ): Promise<Exchange & { aborted?: boolean }> => {
        if (performance.now() > run.deadline) {
            throw new DeadlineReached(`the deadline was reached after ${numSent} of ${planned.length} requests`);
        }
        const target = planned[numSent];
        // The cost shown before the run is the plan's: sending anything else is a bug here.
        if (
            target === undefined ||
            target.probe !== probe ||
            target.identity !== identity ||
            target.stream !== (options.stream ?? false) ||
            target.maxTokens !== (options.maxTokens ?? maxTokens)
        ) {
            throw new Error(
                `request ${numSent + 1} (${probe}, ${identity}) is not the plan's (${target?.probe ?? "none"}, ${target?.identity ?? "-"})`
            );
        }
        numSent += 1;
        const request = {
            key: identity === "A" ? run.keys.a : (run.keys.b ?? run.keys.a),
            user: `kvault-probe-${runId}-${identity.toLowerCase()}-${numSent}`,
            prompt,
            maxTokens: target.maxTokens,
            logprobs: options.logprobs ?? false
        };
        const exchange = options.stream ? await client.streamAndAbort(request, run.cancelAfterMs ?? 250) : await client.complete(request);
        const foreign = markers[identity === "A" ? "B" : "A"];
        const record: ExchangeRecord = {
            probe,
            identity,
            user: request.user,
            sent: {
                targetTokens: target.promptTokens,
                promptChars: prompt.length,
                markers: [...sentMarkers],
                stream: options.stream ?? false
            },
            got: {
                status: exchange.status,
                ...(exchange.promptTokens === undefined ? {} : { promptTokens: exchange.promptTokens }),
                ...(exchange.completionTokens === undefined ? {} : { completionTokens: exchange.completionTokens }),
                excerpt: excerptOf(exchange.text),
                ...(exchange.scoredTokens === undefined ? {} : { scoredTokens: exchange.scoredTokens }),
                ...(exchange.errorMessage || exchange.failure ? { error: excerptOf(exchange.errorMessage || exchange.failure || "") } : {}),
                ...("aborted" in exchange ? { aborted: exchange.aborted as boolean } : {})
            },
            foreignMarkers: findMarkers(exchange.text, foreign),
            elapsedMs: Math.round(exchange.elapsedMs)
        };
        exchanges.push(record);
        run.log?.(`${probe} ${identity}: ${exchange.status === 0 ? (exchange.failure ?? "aborted") : exchange.status}`);
        return exchange;
    };
    /** The probe's foreign-marker findings, from every exchange it recorded. */
    const leaksIn = (probe: ProbeId): Judgement[] =>
        exchanges
            .filter((record) => record.probe === probe && record.foreignMarkers.length > 0)
            .map((record) => ({ verdict: "finding", reason: `${record.identity}'s answer gave away ${record.foreignMarkers.join(", ")}` }));

    // B's own document, made first so that every answer A gets is checked for its markers too.
    const bStart = newMarker("B");
    const bEnd = newMarker("B");

    // Calibration: the server's prompt counts for a document without filler and with some.
    const calibrationStart = newMarker("A");
    const calibrationEnd = newMarker("A");
    const fillerChars = calibrationFillerChars(window);
    const bare = await send(
        "calibration",
        "A",
        `${markedDocument(calibrationStart, calibrationEnd, 0)}\n${ASK_START}`,
        [calibrationStart, calibrationEnd],
        { maxTokens: 1 }
    );
    const filled = await send(
        "calibration",
        "A",
        `${markedDocument(calibrationStart, calibrationEnd, fillerChars)}\n${ASK_START}`,
        [calibrationStart, calibrationEnd],
        { maxTokens: 1 }
    );
    if (bare.status !== 200 || filled.status !== 200) {
        const failed = bare.status !== 200 ? bare : filled;
        throw new CalibrationFailed(failed);
    }
    const measured = bare.promptTokens !== undefined && filled.promptTokens !== undefined && filled.promptTokens > bare.promptTokens;
    const charsPerToken = measured ? fillerChars / (filled.promptTokens! - bare.promptTokens!) : 4;
    const overheadTokens = measured ? bare.promptTokens! : 40;
    const document = (tokens: number, start: string, end: string, question: string, offset = 0): string =>
        `${markedDocument(start, end, Math.max(0, Math.round((tokens - overheadTokens) * charsPerToken)), offset)}\n${question}`;

    const probes: ProbeResult[] = [];
    const guarded = async (id: ProbeId | "truncation", title: string, body: () => Promise<Judgement>): Promise<void> => {
        try {
            const judgement = await body();
            probes.push({ id, title, ...worstOf([judgement, ...(id === "truncation" ? [] : leaksIn(id))]) });
        } catch (error) {
            if (!(error instanceof DeadlineReached)) {
                throw error;
            }
            probes.push({
                id,
                title,
                ...worstOf([{ verdict: "inconclusive", reason: error.message }, ...(id === "truncation" ? [] : leaksIn(id))])
            });
        }
    };

    const sweep = planSweep(window, maxTokens);
    const served: { step: (typeof sweep)[number]; exchange: Exchange; startMarker: string }[] = [];
    await guarded("window-sweep", "Prompt lengths across the window: 200 within, 400 over, nothing cut", async () => {
        const judgements: Judgement[] = [];
        for (const [index, step] of sweep.entries()) {
            const start = newMarker("A");
            const end = newMarker("A");
            const exchange = await send("window-sweep", "A", document(step.promptTokens, start, end, ASK_START, index), [start, end]);
            judgements.push(judgeSweepStep(step, exchange, window));
            if (step.expect === "served") {
                served.push({ step, exchange, startMarker: start });
            }
        }
        return worstOf(judgements);
    });
    await guarded("truncation", "Served prompts keep their start (the answer knows the start marker)", async () => judgeTruncation(served));
    await guarded("recall", "B asks for a marker only A sent", async () => judgeAsk(await send("recall", "B", RECALL, []), markers.A));
    await guarded("completion", "B continues text whose end only A sent", async () =>
        judgeAsk(await send("completion", "B", CONTINUE, []), markers.A)
    );

    const long = longestServed(window, maxTokens);
    const question = document(long, bStart, bEnd, ASK_END, 3);
    let baseline: Exchange | undefined;
    await guarded("divergence", "B's greedy answers do not depend on what A sent before", async () => {
        const seedMarkers = [newMarker("A"), newMarker("A")] as const;
        const seed = document(seedTokens(window), seedMarkers[0], seedMarkers[1], ASK_START, 5);
        const shortQuestion = document(sweep[0]!.promptTokens, bStart, bEnd, ASK_END, 4);
        const short: Exchange[] = [];
        const long: Exchange[] = [];
        for (const round of [0, 1, 2]) {
            const markersNow = round < 2 ? [...seedMarkers] : [newMarker("A"), newMarker("A")];
            const text = round < 2 ? seed : document(seedTokens(window), markersNow[0]!, markersNow[1]!, ASK_START, 7);
            await send("divergence", "A", text, markersNow, { maxTokens: 1 });
            short.push(await send("divergence", "B", shortQuestion, [bStart, bEnd], { logprobs: run.logprobs }));
            long.push(await send("divergence", "B", question, [bStart, bEnd], { logprobs: run.logprobs }));
        }
        baseline = long.every((answer) => answer.status === 200 && answer.text === long[0]!.text) ? long[0] : undefined;
        return judgeDivergence(short, long);
    });
    await guarded("cancel-race", "A cancels a long prompt mid-prefill; B's next answers stay its own", async () => {
        const start = newMarker("A");
        const end = newMarker("A");
        const cancelled = await send("cancel-race", "A", document(long, start, end, ASK_START, 9), [start, end], { stream: true });
        const after = await send("cancel-race", "B", question, [bStart, bEnd]);
        const recall = await send("cancel-race", "B", RECALL, []);
        return worstOf([
            judgeCancelRace({ ...cancelled, aborted: cancelled.aborted ?? false }, after, baseline, markers.A),
            judgeAsk(recall, markers.A)
        ]);
    });

    const verdict = worstOf(probes).verdict;
    return {
        version: 1,
        url: client.root,
        model: client.options.model,
        endpoint: client.options.kind,
        identities: describeIdentities(run.keys),
        window,
        windowSource: run.windowSource,
        maxTokens,
        estimate: estimateCost(planned),
        calibration: { overheadTokens, charsPerToken: Math.round(charsPerToken * 100) / 100, measured },
        startedAt: startedAt.toISOString(),
        elapsedMs: Math.round(performance.now() - started),
        exchanges,
        probes,
        verdict
    };
}

/** The calibration's requests were not served: the endpoint, model or key is not usable for the probe. */
export class CalibrationFailed extends Error {
    readonly code = "probe_calibration_failed";
    constructor(readonly exchange: Exchange) {
        super(
            `The first requests were not served (${exchange.status === 0 ? exchange.failure : exchange.status}${exchange.errorMessage ? `: ${exchange.errorMessage}` : ""}). ` +
                "Check --model, the key and --endpoint (chat or completions)."
        );
    }
}

export function describeIdentities(keys: { readonly a: string | undefined; readonly b: string | undefined }): string {
    if (keys.b !== undefined && keys.b !== keys.a) {
        return "two keys (--key-env and --second-key-env), each request with a user value of its own";
    }
    return `${keys.a === undefined ? "no key" : "one key"}, two identities told apart by their user values only`;
}
