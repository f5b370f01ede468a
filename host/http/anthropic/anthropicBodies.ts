// The Messages API's answer: a `message` object whose content is text and tool_use blocks, its
// stop reason, and its usage (the prompt's tokens Kvault already held count as cache reads).
import crypto from "node:crypto";
import type { FinishReason, TurnUsage } from "../../../contract/engineProtocol.js";
import type { ApiToolCall } from "../toolCallAnswers.js";

export interface AnthropicMessageIdentity {
    readonly id: string;
    readonly model: string;
}

export type AnthropicStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

export interface AnthropicToolUse {
    readonly type: "tool_use";
    readonly id: string;
    readonly name: string;
    readonly input: Record<string, unknown>;
}

export interface AnthropicUsage {
    readonly input_tokens: number;
    readonly output_tokens: number;
    readonly cache_read_input_tokens?: number;
    readonly cache_creation_input_tokens?: number;
}

export type AnthropicBlock = { readonly type: "text"; readonly text: string } | AnthropicToolUse;

export function newMessageIdentity(model: string): AnthropicMessageIdentity {
    return { id: `msg_${crypto.randomUUID().replaceAll("-", "")}`, model };
}

/** A call read from the answer (toolCallAnswers.ts) as a tool_use block; its arguments were checked to be an object. */
export function toolUseOf(call: ApiToolCall): AnthropicToolUse {
    return {
        type: "tool_use",
        id: `toolu_${call.id.slice("call_".length)}`,
        name: call.function.name,
        input: JSON.parse(call.function.arguments) as Record<string, unknown>
    };
}

/**
 * Why the answer ended: its calls, max_tokens, else end_turn. The engine reports an end-of-turn
 * token and a stop sequence alike, so a stop sequence is reported as end_turn (docs/http-api.md).
 */
export function stopReasonOf(finishReason: FinishReason, hasCalls: boolean): AnthropicStopReason {
    return hasCalls ? "tool_use" : finishReason === "length" ? "max_tokens" : "end_turn";
}

export function usageOf(usage: TurnUsage): AnthropicUsage {
    return {
        input_tokens: usage.promptTokens - usage.cachedPromptTokens,
        output_tokens: usage.completionTokens,
        cache_read_input_tokens: usage.cachedPromptTokens,
        cache_creation_input_tokens: 0
    };
}

export function messageBody(
    identity: AnthropicMessageIdentity,
    content: readonly AnthropicBlock[],
    stopReason: AnthropicStopReason | null,
    usage: AnthropicUsage
): Record<string, unknown> {
    return {
        id: identity.id,
        type: "message",
        role: "assistant",
        model: identity.model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage
    };
}
