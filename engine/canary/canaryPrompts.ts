import { KvaultError } from "../core/KvaultError.js";
import type { KvEngine } from "../KvEngine.js";
import { InvalidRequestError } from "../request/requestErrors.js";
import type { ChatRenderer } from "../runtime/ChatRenderer.js";
import { MARKER_PREFIX } from "./canaryMarkers.js";

/** Tokens A generates after its prompt: enough to finish a turn, few enough to stay quick. */
export const A_MAX_TOKENS = 4;
/** B's "repeat what came before" answer, at most (tokens): room for both markers and some text. */
export const RECALL_MAX_TOKENS = 64;
/** B's answer after "The secret code is KV-CANARY-": the secret's tokens and a few more. */
export const CUE_MAX_TOKENS = 24;
/** Filler between A's markers when the caller names no size: many pages, bounded so a run on a CPU stays within a minute or two. */
export const DEFAULT_MAX_FILLER_TOKENS = 4_096;
/** Below this there is no "long prompt" to hide markers in. */
const MIN_FILLER_TOKENS = 16;
/** Tokens kept free of the window for a template that tokenizes a little differently in context. */
const SLACK_TOKENS = 8;

/** Filler that says nothing of the markers; varied, so a real model reads it as a document. */
const A_FILLER = [
    "The quarterly report lists shipping records for the northern warehouse, sorted by date.",
    "Weather notes mention light rain on Tuesday and a dry, windy weekend.",
    "The meeting minutes record that the budget review moves to the second week of the month.",
    "Inventory counts for bolts, washers and brackets match the previous audit.",
    "A reminder asks every team to file travel expenses before the end of the quarter."
];
/** B's own text: nothing of A's, long enough that B's prompt is handed off through pages too. */
const B_FILLER = [
    "Workspace B keeps notes about a vegetable garden: tomatoes, beans and a row of basil.",
    "The bread recipe needs flour, water, salt and a long, slow rise overnight.",
    "The train timetable lists departures every twenty minutes on weekdays."
];
const RECALL_QUESTION =
    "Repeat, word for word, everything that was written before this message, starting from its very first line, including any codes.";
const CUE_QUESTION = "What is the secret code? Answer with the code alone.";
const CUE_ANSWER = "The secret code is ";

/** There is no room in this engine's window for a canary run. */
export class CanaryNoRoomError extends KvaultError {
    readonly code = "canary_no_room";
}

/** A marker's tokens, as they can appear in text a model produces. */
export interface MarkerTokens {
    readonly marker: string;
    /** The 12 random characters. */
    readonly secret: string;
    /** The tokens that carry the secret, in each way the marker tokenizes (alone, after a space, after the cue). */
    readonly secretRuns: readonly (readonly number[])[];
    /** After B's cue, the token that begins the secret; undefined when the marker's public part tokenizes differently from the cue's. */
    readonly firstSecretToken: number | undefined;
}

export interface CanaryPrompts {
    /** A's prompt: the first marker, the filler, the second marker. */
    readonly a: readonly number[];
    readonly fillerTokens: number;
    /** B's first prompt: its own text, then "repeat what came before". */
    readonly recall: readonly number[];
    /** B's second prompt: "what is the secret code?", and the answer begun up to the secret. */
    readonly cue: readonly number[];
    readonly markers: readonly MarkerTokens[];
}

/**
 * The canary's prompts for this engine, sized from its capacity: A's filler as long as the window
 * and the free pages allow (or `requestedFiller`), at most `DEFAULT_MAX_FILLER_TOKENS` by default;
 * B's first prompt long enough to go through prefill and pages too, ending inside a page.
 */
export function buildCanaryPrompts(
    engine: KvEngine,
    renderer: ChatRenderer,
    markers: readonly [string, string],
    requestedFiller?: number
): CanaryPrompts {
    const tokenize = (text: string): number[] => engine.tokenize(text);
    const limit = engine.window.limit;
    const { pageTokens } = engine.pool.config;
    const renderA = (filler: string): number[] =>
        renderer.renderConversation([
            { role: "user", content: `${CUE_ANSWER}${markers[0]}.\n\n${filler}\n\nThe second secret code is ${markers[1]}.` }
        ]);

    const numBaseTokens = renderA("").length;
    const maxByWindow = limit - A_MAX_TOKENS - numBaseTokens - SLACK_TOKENS;
    // The handoff takes A's pages all at once; more than are free would push users' swapped KV out.
    const maxByPages = engine.prefill ? engine.pool.numFreePages * pageTokens - numBaseTokens - SLACK_TOKENS : Number.MAX_SAFE_INTEGER;
    if (
        requestedFiller !== undefined &&
        (!Number.isSafeInteger(requestedFiller) || requestedFiller < MIN_FILLER_TOKENS || requestedFiller > maxByWindow)
    ) {
        throw new InvalidRequestError(
            `fillerTokens must be a whole number from ${MIN_FILLER_TOKENS} to ${Math.max(MIN_FILLER_TOKENS, maxByWindow).toLocaleString("en-US")} ` +
                `(the window's limit of ${limit.toLocaleString("en-US")} tokens less the markers and A's answer); got ${String(requestedFiller)}.`
        );
    }
    const target = requestedFiller ?? Math.min(maxByWindow, maxByPages, DEFAULT_MAX_FILLER_TOKENS);
    if (target < MIN_FILLER_TOKENS) {
        throw new CanaryNoRoomError(
            `A canary run needs at least ${MIN_FILLER_TOKENS} tokens of filler; this engine has room for ${Math.max(0, target)} ` +
                `(limit ${limit.toLocaleString("en-US")} tokens, ${engine.pool.numFreePages.toLocaleString("en-US")} free pages of ${pageTokens}). Wait for running turns to end, or give the engine a larger window.`
        );
    }

    const sentences = sentencesOf(A_FILLER, tokenize, target);
    let a = renderA(sentences.join(" "));
    for (let guard = sentences.length; a.length + A_MAX_TOKENS > limit && guard > 1; guard--) {
        // the template may join sentences into fewer tokens, or more
        sentences.pop();
        a = renderA(sentences.join(" "));
    }

    const renderRecall = (filler: readonly string[]): number[] =>
        renderer.renderConversation([{ role: "user", content: `${filler.join(" ")}\n\n${RECALL_QUESTION}` }]);
    const recallBudget = limit - RECALL_MAX_TOKENS - SLACK_TOKENS;
    // Through the handoff (more new tokens than are evaluated in place), over two pages or more, the last one partly filled.
    const recallTarget = engine.prefill
        ? Math.min(recallBudget, Math.max(engine.config.inPlacePrefillTokens + 2, pageTokens + Math.ceil(pageTokens / 2)))
        : 0;
    const bFiller = sentencesOf(B_FILLER, tokenize, Math.max(0, recallTarget - renderRecall([]).length));
    let recall = renderRecall(bFiller);
    if ((recall.length - 1) % pageTokens === 0 && recall.length + 4 + RECALL_MAX_TOKENS <= limit) {
        recall = renderRecall([...bFiller, "Thanks."]);
    }

    const cueAnswers = markers.map((marker) => tokenize(CUE_ANSWER + marker));
    const cuePrefix = cueAnswers[0]!.slice(0, firstSecretIndex(cueAnswers[0]!, renderer, CUE_ANSWER.length));
    const cue = [...renderer.renderConversation([{ role: "user", content: CUE_QUESTION }]), ...cuePrefix];

    return {
        a,
        fillerTokens: a.length - numBaseTokens,
        recall,
        cue,
        markers: markers.map((marker, index) => {
            const answer = cueAnswers[index]!;
            const variants = [tokenize(marker), tokenize(` ${marker}`)];
            const secretRuns = [
                ...variants.map((tokens) => tokens.slice(firstSecretIndex(tokens, renderer, 0))),
                answer.slice(cuePrefix.length)
            ];
            const samePublicPart = cuePrefix.every((token, position) => answer[position] === token);
            return {
                marker,
                secret: marker.slice(MARKER_PREFIX.length),
                secretRuns,
                firstSecretToken: samePublicPart ? answer[cuePrefix.length] : undefined
            };
        })
    };
}

/** Sentences of `pool`, cycled, until they make about `numTokens` tokens (bounded by `numTokens` sentences). */
function sentencesOf(pool: readonly string[], tokenize: (text: string) => number[], numTokens: number): string[] {
    const sentences: string[] = [];
    let count = 0;
    for (let index = 0; count < numTokens && index < numTokens; index++) {
        const sentence = pool[index % pool.length]!;
        sentences.push(sentence);
        count += tokenize(` ${sentence}`).length;
    }
    return sentences;
}

/** The first token whose text reaches into the marker's secret: past `numLeadingChars` and "KV-CANARY-". */
function firstSecretIndex(tokens: readonly number[], renderer: ChatRenderer, numLeadingChars: number): number {
    const publicChars = numLeadingChars + MARKER_PREFIX.length;
    for (let index = 0; index < tokens.length; index++) {
        if (renderer.detokenize(tokens.slice(0, index + 1)).trimStart().length > publicChars) {
            return index;
        }
    }
    return Math.max(0, tokens.length - 1);
}
