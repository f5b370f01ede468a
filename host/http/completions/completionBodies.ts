import type { FinishReason, TokenLogprob, TurnUsage } from "../../../contract/engineProtocol.js";
import { usageBody, type CompletionIdentity } from "../chatCompletionResponses.js";

/**
 * The legacy API's `choices[].logprobs`: parallel lists of each token's text, its log probability,
 * its most likely alternatives (token → logprob; null when none were asked for) and where its text
 * starts in the choice's text (UTF-16 code units). `offset` is where these tokens start, for a stream.
 */
export function legacyLogprobsBody(logprobs: readonly TokenLogprob[] | undefined, top: number, offset = 0): Record<string, unknown> | null {
    if (logprobs === undefined) {
        return null;
    }
    const textOffset: number[] = [];
    let at = offset;
    for (const entry of logprobs) {
        textOffset.push(at);
        at += entry.token.length;
    }
    return {
        tokens: logprobs.map((entry) => entry.token),
        token_logprobs: logprobs.map((entry) => entry.logprob),
        top_logprobs:
            top === 0
                ? null
                : logprobs.map((entry) => Object.fromEntries(entry.topLogprobs.map((candidate) => [candidate.token, candidate.logprob]))),
        text_offset: textOffset
    };
}

export function textCompletionBody(
    identity: CompletionIdentity,
    text: string,
    finishReason: FinishReason | null,
    logprobs: Record<string, unknown> | null,
    usage?: TurnUsage
): Record<string, unknown> {
    return {
        id: identity.id,
        object: "text_completion",
        created: identity.created,
        model: identity.model,
        choices: [{ text, index: 0, logprobs, finish_reason: finishReason }],
        ...(usage === undefined ? {} : { usage: usageBody(usage) })
    };
}

/** The stream's last event when usage was asked for: no choice, the usage. */
export function textUsageChunkBody(identity: CompletionIdentity, usage: TurnUsage): Record<string, unknown> {
    return {
        id: identity.id,
        object: "text_completion",
        created: identity.created,
        model: identity.model,
        choices: [],
        usage: usageBody(usage)
    };
}
