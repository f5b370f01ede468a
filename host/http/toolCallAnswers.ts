// An answer read as tool calls: first in the chat template's own syntax (templateToolCalls.ts,
// the syntax the engine reports for its model), then as JSON: under a required tool choice the
// grammar made it `[{"name", "arguments"}]`, and under "auto" the same shape (a list, or one
// object) is a call too, as a model without a syntax of its own writes one. Either way a call names
// one of the tools, with an object of arguments; anything else is text. Served as OpenAI's `tool_calls`.
import crypto from "node:crypto";
import type { FinishReason, GrammarSpec, ToolCallSyntax } from "../../contract/engineProtocol.js";
import { isRecord } from "../../contract/rpc/fieldSchemas.js";
import { MAX_PARALLEL_CALLS, type ToolUse } from "./readTools.js";
import { mayBeTemplateCall, parseTemplateCalls } from "./templateToolCalls.js";

/** OpenAI's `tool_calls` entry; `arguments` is JSON text. */
export interface ApiToolCall {
    readonly id: string;
    readonly type: "function";
    readonly function: { readonly name: string; readonly arguments: string };
}

/** The answer's calls, or undefined when it is text (or a call cut short by max_tokens: it is served as the text it is). */
export function readToolCallAnswer(
    text: string,
    use: ToolUse,
    finishReason: FinishReason,
    syntax?: ToolCallSyntax
): ApiToolCall[] | undefined {
    if (finishReason === "length") {
        return undefined;
    }
    const items = (syntax === undefined ? undefined : parseTemplateCalls(text, syntax)) ?? readJsonCalls(text);
    if (items === undefined) {
        return undefined;
    }
    const names = new Set(use.tools.map((tool) => tool.name));
    const calls: ApiToolCall[] = [];
    for (const item of items) {
        if (!isRecord(item) || typeof item.name !== "string" || !names.has(item.name) || !isRecord(item.arguments)) {
            return undefined;
        }
        calls.push({
            id: `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`,
            type: "function",
            function: { name: item.name, arguments: JSON.stringify(item.arguments) }
        });
    }
    return calls.length === 0 || (!use.parallel && calls.length > 1) ? undefined : calls;
}

/** The JSON shape's items: a list of calls or one call object; undefined when the text is not JSON. */
function readJsonCalls(text: string): readonly unknown[] | undefined {
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch {
        return undefined;
    }
    return Array.isArray(value) ? value : [value];
}

/**
 * Whether streamed text may still turn out to be a call, so it is held back rather than sent as
 * content: always under a required choice; under "auto" while it is blank, starts as JSON does,
 * or is (the beginning of) a call in the template's syntax.
 */
export function mayBeToolCall(textSoFar: string, use: ToolUse, syntax?: ToolCallSyntax): boolean {
    if (use.choice !== "auto") {
        return true;
    }
    const start = textSoFar.trimStart();
    return start === "" || start.startsWith("{") || start.startsWith("[") || (syntax !== undefined && mayBeTemplateCall(start, syntax));
}

/**
 * For a required or named call where the template has a syntax of its own: the grammar that holds
 * the answer to calls in that syntax (the engine builds it, engine/runtime/toolCallGrammar.ts), in
 * place of readTools' JSON shape; undefined otherwise (that JSON grammar stands).
 */
export function templateCallGrammar(use: ToolUse, syntax: ToolCallSyntax | undefined): GrammarSpec | undefined {
    if (use.choice === "auto" || use.grammar === undefined || syntax === undefined) {
        return undefined;
    }
    const named = typeof use.choice === "string" ? undefined : use.choice.name;
    const called = named === undefined ? use.tools : use.tools.filter((tool) => tool.name === named);
    return {
        kind: "toolCalls",
        syntax,
        calls: called.map((tool) => ({ name: tool.name, schema: tool.parameters ?? { type: "object", properties: {} } })),
        maxCalls: use.parallel && named === undefined && syntax.parallel !== undefined ? Math.min(MAX_PARALLEL_CALLS, called.length) : 1
    };
}

/** The deltas of streamed calls in OpenAI's shape: each call's id and name, then its arguments. */
export function toolCallDeltas(calls: readonly ApiToolCall[]): Record<string, unknown>[] {
    return calls.flatMap((call, index) => [
        { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] },
        { tool_calls: [{ index, function: { arguments: call.function.arguments } }] }
    ]);
}
