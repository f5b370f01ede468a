import type { FinishReason, TokenLogprob, TurnUsage } from "../../contract/engineProtocol.js";
import type { ApiToolCall } from "./toolCallAnswers.js";

export interface CompletionIdentity {
    readonly id: string;
    readonly created: number;
    readonly model: string;
}

export function usageBody(usage: TurnUsage): Record<string, unknown> {
    return {
        prompt_tokens: usage.promptTokens,
        completion_tokens: usage.completionTokens,
        total_tokens: usage.promptTokens + usage.completionTokens,
        prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens },
        // OpenAI's fields for predicted tokens: here the drafts of speculative decoding
        ...(usage.acceptedDraftTokens === undefined
            ? {}
            : {
                  completion_tokens_details: {
                      accepted_prediction_tokens: usage.acceptedDraftTokens,
                      rejected_prediction_tokens: usage.rejectedDraftTokens ?? 0
                  }
              })
    };
}

/** OpenAI's `choices[].logprobs`, or null when not asked for. */
export function logprobsBody(logprobs: readonly TokenLogprob[] | undefined): Record<string, unknown> | null {
    if (logprobs === undefined) {
        return null;
    }
    return {
        content: logprobs.map((entry) => ({
            token: entry.token,
            logprob: entry.logprob,
            bytes: entry.bytes,
            top_logprobs: entry.topLogprobs.map((candidate) => ({
                token: candidate.token,
                logprob: candidate.logprob,
                bytes: candidate.bytes
            }))
        })),
        refusal: null
    };
}

export function completionBody(
    identity: CompletionIdentity,
    text: string,
    finishReason: FinishReason | "tool_calls",
    usage: TurnUsage,
    logprobs?: readonly TokenLogprob[],
    toolCalls?: readonly ApiToolCall[]
): Record<string, unknown> {
    return {
        id: identity.id,
        object: "chat.completion",
        created: identity.created,
        model: identity.model,
        choices: [
            {
                index: 0,
                message:
                    toolCalls === undefined
                        ? { role: "assistant", content: text, refusal: null }
                        : { role: "assistant", content: null, refusal: null, tool_calls: toolCalls },
                logprobs: logprobsBody(logprobs),
                finish_reason: finishReason
            }
        ],
        usage: usageBody(usage)
    };
}

export function chunkBody(
    identity: CompletionIdentity,
    delta: Record<string, unknown>,
    finishReason: FinishReason | "tool_calls" | null,
    logprobs?: readonly TokenLogprob[]
): Record<string, unknown> {
    return {
        id: identity.id,
        object: "chat.completion.chunk",
        created: identity.created,
        model: identity.model,
        choices: [{ index: 0, delta, logprobs: logprobsBody(logprobs), finish_reason: finishReason }]
    };
}

export function usageChunkBody(identity: CompletionIdentity, usage: TurnUsage): Record<string, unknown> {
    return {
        id: identity.id,
        object: "chat.completion.chunk",
        created: identity.created,
        model: identity.model,
        choices: [],
        usage: usageBody(usage)
    };
}
