// The Responses API's `response` object and its output items: a `message` with one output_text
// part, and a `function_call` per call the answer made.
import crypto from "node:crypto";
import type { FinishReason, TurnUsage } from "../../../contract/engineProtocol.js";
import type { ApiToolCall } from "../toolCallAnswers.js";
import type { ResponsesRequest } from "./parseResponsesRequest.js";

export interface ResponseIdentity {
    readonly id: string;
    readonly createdAt: number;
    readonly model: string;
}

export interface MessageItem {
    readonly type: "message";
    readonly id: string;
    readonly status: "in_progress" | "completed" | "incomplete";
    readonly role: "assistant";
    readonly content: readonly OutputText[];
}

export interface OutputText {
    readonly type: "output_text";
    readonly text: string;
    readonly annotations: readonly never[];
}

export interface FunctionCallItem {
    readonly type: "function_call";
    readonly id: string;
    readonly call_id: string;
    readonly name: string;
    readonly arguments: string;
    readonly status: "in_progress" | "completed";
}

export type OutputItem = MessageItem | FunctionCallItem;

const newId = (prefix: string): string => `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;

export function newResponseIdentity(model: string): ResponseIdentity {
    return { id: newId("resp"), createdAt: Math.floor(Date.now() / 1000), model };
}

export const newMessageItemId = (): string => newId("msg");

export const outputText = (text: string): OutputText => ({ type: "output_text", text, annotations: [] });

export function messageItem(id: string, text: string | undefined, status: MessageItem["status"]): MessageItem {
    return { type: "message", id, status, role: "assistant", content: text === undefined ? [] : [outputText(text)] };
}

export function functionCallItem(call: ApiToolCall, status: FunctionCallItem["status"]): FunctionCallItem {
    return {
        type: "function_call",
        id: `fc_${call.id.slice("call_".length)}`,
        call_id: call.id,
        name: call.function.name,
        arguments: status === "completed" ? call.function.arguments : "",
        status
    };
}

export interface ResponseOutcome {
    readonly status: "in_progress" | "completed" | "incomplete";
    readonly output: readonly OutputItem[];
    readonly finishReason?: FinishReason;
    readonly usage?: TurnUsage;
}

export function responseBody(identity: ResponseIdentity, request: ResponsesRequest, outcome: ResponseOutcome): Record<string, unknown> {
    const usage = outcome.usage;
    return {
        id: identity.id,
        object: "response",
        created_at: identity.createdAt,
        status: outcome.status,
        error: null,
        incomplete_details: outcome.status === "incomplete" ? { reason: "max_output_tokens" } : null,
        instructions: request.instructions ?? null,
        max_output_tokens: request.sampling.maxTokens,
        model: identity.model,
        output: outcome.output,
        parallel_tool_calls: request.echo.parallelToolCalls,
        previous_response_id: request.previousResponseId ?? null,
        store: request.store,
        temperature: request.sampling.temperature,
        top_p: request.sampling.topP ?? 1,
        text: { format: { type: "text" } },
        tool_choice: request.echo.toolChoice,
        tools: request.echo.tools,
        truncation: "disabled",
        user: request.user ?? null,
        metadata: {},
        usage:
            usage === undefined
                ? null
                : {
                      input_tokens: usage.promptTokens,
                      input_tokens_details: { cached_tokens: usage.cachedPromptTokens },
                      output_tokens: usage.completionTokens,
                      output_tokens_details: { reasoning_tokens: 0 },
                      total_tokens: usage.promptTokens + usage.completionTokens
                  }
    };
}
