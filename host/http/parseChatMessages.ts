// The `messages` of a chat completion: system (or developer), user and assistant messages, an
// assistant's `tool_calls`, and the `tool` messages answering them, folded into the calls they
// answer (the engine's ChatMessage carries a call with its result, as a chat template renders it).
import type { ChatMessage, ToolCall } from "../../contract/engineProtocol.js";
import { isRecord } from "../../contract/rpc/fieldSchemas.js";
import { refuseUnservedMessageFields } from "./chatCompletionFields.js";
import { invalidRequest } from "./OpenAiError.js";

interface PendingCall {
    readonly call: ToolCall;
    result?: string;
}

/** The conversation; the last message is the user's, or tool results answering every call of the assistant's last message. */
export function parseChatMessages(value: unknown): ChatMessage[] {
    if (!Array.isArray(value) || value.length === 0) {
        throw invalidRequest("messages must be a non-empty array.", "messages");
    }
    const out: { message: ChatMessage; calls?: PendingCall[]; index: number }[] = [];
    value.forEach((item: unknown, index: number) => {
        if (!isRecord(item)) {
            throw invalidRequest(`messages[${index}] must be an object.`, `messages[${index}]`);
        }
        const role = item.role === "developer" ? "system" : item.role;
        refuseUnservedMessageFields(item, index, role === "assistant" ? ["tool_calls"] : role === "tool" ? ["tool_call_id"] : []);
        if (role === "tool") {
            answerCall(out.at(-1)?.calls, item, index);
            return;
        }
        if (role !== "system" && role !== "user" && role !== "assistant") {
            throw invalidRequest(
                `messages[${index}].role must be "system", "developer", "user", "assistant" or "tool".`,
                `messages[${index}].role`
            );
        }
        const calls = role === "assistant" ? readCalls(item.tool_calls, index) : undefined;
        const content =
            calls !== undefined && (item.content === null || item.content === undefined) ? "" : parseContent(item.content, index);
        out.push({ message: { role, content }, ...(calls === undefined ? {} : { calls }), index });
    });
    const messages = out.map(({ message, calls, index }, position) => {
        if (calls === undefined) {
            return message;
        }
        const unanswered = calls.findIndex((pending) => pending.result === undefined);
        if (unanswered >= 0 && position < out.length - 1) {
            throw invalidRequest(
                `messages[${index}].tool_calls[${unanswered}] (id ${calls[unanswered]!.call.id}) has no tool message answering it; send its result (role "tool", tool_call_id) right after that message.`,
                `messages[${index}].tool_calls[${unanswered}]`
            );
        }
        return {
            ...message,
            toolCalls: calls.map((pending) => (pending.result === undefined ? pending.call : { ...pending.call, result: pending.result }))
        };
    });
    const last = out.at(-1)!;
    const answered = last.calls !== undefined && last.calls.every((pending) => pending.result !== undefined);
    if (last.message.role !== "user" && !answered) {
        throw invalidRequest(
            'The last message must have role "user" (or be "tool" messages answering every call of the assistant\'s last message).',
            `messages[${value.length - 1}].role`
        );
    }
    return messages;
}

function readCalls(value: unknown, index: number): PendingCall[] | undefined {
    if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
        return undefined;
    }
    const where = `messages[${index}].tool_calls`;
    if (!Array.isArray(value)) {
        throw invalidRequest(`${where} must be a list of calls.`, where);
    }
    const ids = new Set<string>();
    return value.map((item: unknown, number: number) => {
        const at = `${where}[${number}]`;
        if (!isRecord(item) || item.type !== "function" || !isRecord(item.function)) {
            throw invalidRequest(`${at} must be {id, type: "function", function: {name, arguments}}.`, at);
        }
        if (typeof item.id !== "string" || item.id === "" || item.id.length > 256 || ids.has(item.id)) {
            throw invalidRequest(`${at}.id must be a string of 1 to 256 characters, unique in the message.`, `${at}.id`);
        }
        ids.add(item.id);
        const { name, arguments: args } = item.function;
        if (typeof name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
            throw invalidRequest(`${at}.function.name must be 1 to 64 letters, digits, _ or -.`, `${at}.function.name`);
        }
        if (typeof args !== "string") {
            throw invalidRequest(`${at}.function.arguments must be the arguments as JSON text.`, `${at}.function.arguments`);
        }
        return { call: { id: item.id, name, arguments: args } };
    });
}

/** A `tool` message: the result of one call of the assistant message just before it (and its other tool messages). */
function answerCall(calls: PendingCall[] | undefined, message: Record<string, unknown>, index: number): void {
    if (calls === undefined) {
        throw invalidRequest(
            `messages[${index}] has role "tool" but does not follow an assistant message with tool_calls; a tool message answers one of those calls.`,
            `messages[${index}].role`
        );
    }
    const pending = calls.find((candidate) => candidate.call.id === message.tool_call_id);
    if (pending === undefined || pending.result !== undefined) {
        throw invalidRequest(
            `messages[${index}].tool_call_id must be the id of an unanswered call of the assistant message before it (${calls.map((candidate) => candidate.call.id).join(", ")}).`,
            `messages[${index}].tool_call_id`
        );
    }
    pending.result = parseContent(message.content, index);
}

export function parseContent(content: unknown, index: number): string {
    if (typeof content === "string") {
        return content;
    }
    if (Array.isArray(content) && content.every((part) => isRecord(part) && part.type === "text" && typeof part.text === "string")) {
        return content.map((part) => (part as { text: string }).text).join("");
    }
    throw invalidRequest(`messages[${index}].content must be a string or an array of text parts.`, `messages[${index}].content`);
}
