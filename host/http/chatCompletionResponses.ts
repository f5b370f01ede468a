import type { FinishReason, TurnUsage } from "../../contract/engineProtocol.js";

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
        prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens }
    };
}

export function completionBody(identity: CompletionIdentity, text: string, finishReason: FinishReason, usage: TurnUsage): Record<string, unknown> {
    return {
        id: identity.id,
        object: "chat.completion",
        created: identity.created,
        model: identity.model,
        choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null }, logprobs: null, finish_reason: finishReason }],
        usage: usageBody(usage)
    };
}

export function chunkBody(identity: CompletionIdentity, delta: Record<string, unknown>, finishReason: FinishReason | null): Record<string, unknown> {
    return {
        id: identity.id,
        object: "chat.completion.chunk",
        created: identity.created,
        model: identity.model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }]
    };
}

export function usageChunkBody(identity: CompletionIdentity, usage: TurnUsage): Record<string, unknown> {
    return { id: identity.id, object: "chat.completion.chunk", created: identity.created, model: identity.model, choices: [], usage: usageBody(usage) };
}
