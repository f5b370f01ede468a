// The Responses API's `input` read into the engine's conversation, after the conversation a
// `previous_response_id` continues: text, or items: messages (input_text and output_text parts),
// the model's `function_call` items (calls of the assistant message before them) and
// `function_call_output` items, folded into the calls they answer as a chat template renders them.
import type { ChatMessage, ToolCall } from "../../../contract/engineProtocol.js";
import { isRecord } from "../../../contract/rpc/fieldSchemas.js";
import { describe } from "../bodyFields.js";
import { invalidRequest } from "../OpenAiError.js";

interface PendingCall {
    readonly call: ToolCall;
    result?: string;
}

interface Entry {
    message: ChatMessage;
    calls?: PendingCall[];
}

const messageFields = ["type", "role", "content", "id", "status"];
const functionCallFields = ["type", "id", "call_id", "name", "arguments", "status"];
const functionOutputFields = ["type", "id", "call_id", "output", "status"];
const textPartFields = ["type", "text", "annotations", "logprobs"];

/** `prior` then `input`; the result ends with the user's message, or outputs answering every call of the last assistant message. */
export function parseResponseInput(input: unknown, prior: readonly ChatMessage[]): ChatMessage[] {
    const entries: Entry[] = prior.map((message) =>
        message.toolCalls === undefined
            ? { message }
            : { message, calls: message.toolCalls.map((call) => ({ call, ...(call.result === undefined ? {} : { result: call.result }) })) }
    );
    if (typeof input === "string") {
        entries.push({ message: { role: "user", content: input } });
    } else if (Array.isArray(input) && input.length > 0) {
        input.forEach((item: unknown, index: number) => readItem(entries, item, `input[${index}]`));
    } else {
        throw invalidRequest(`input is required: a string, or a non-empty list of items; got ${describe(input)}.`, "input");
    }
    const last = entries.at(-1)!;
    const answered = last.calls !== undefined && last.calls.every((pending) => pending.result !== undefined);
    if (last.message.role !== "user" && !answered) {
        throw invalidRequest(
            "input must end with a user message, or with function_call_output items answering every function_call before them.",
            "input"
        );
    }
    return entries.map(({ message, calls }, position) => {
        if (calls === undefined) {
            return message;
        }
        const unanswered = calls.find((pending) => pending.result === undefined);
        if (unanswered !== undefined && position < entries.length - 1) {
            throw invalidRequest(
                `The function_call ${unanswered.call.id} (${unanswered.call.name}) has no function_call_output answering it; send its output (type "function_call_output", call_id) right after the calls.`,
                "input"
            );
        }
        return {
            ...message,
            toolCalls: calls.map((pending) => (pending.result === undefined ? pending.call : { ...pending.call, result: pending.result }))
        };
    });
}

function readItem(entries: Entry[], item: unknown, where: string): void {
    if (!isRecord(item)) {
        throw invalidRequest(`${where} must be an item object (a message, function_call or function_call_output).`, where);
    }
    const type = item.type ?? "message";
    if (type === "message") {
        refuseUnlisted(item, messageFields, where);
        const role = item.role === "developer" ? "system" : item.role;
        if (role !== "user" && role !== "assistant" && role !== "system") {
            throw invalidRequest(
                `${where}.role must be "user", "assistant", "system" or "developer"; got ${describe(item.role)}.`,
                `${where}.role`
            );
        }
        entries.push({ message: { role, content: readContent(item.content, `${where}.content`) } });
        return;
    }
    if (type === "function_call") {
        refuseUnlisted(item, functionCallFields, where);
        const call = readCall(item, where);
        const last = entries.at(-1);
        // calls follow the assistant's text of the same answer; without one they are an answer of their own
        if (
            last?.message.role === "assistant" &&
            (last.calls === undefined || last.calls.every((pending) => pending.result === undefined))
        ) {
            last.calls = [...(last.calls ?? []), { call }];
        } else {
            entries.push({ message: { role: "assistant", content: "" }, calls: [{ call }] });
        }
        return;
    }
    if (type === "function_call_output") {
        refuseUnlisted(item, functionOutputFields, where);
        const calls = [...entries].reverse().find((entry) => entry.message.role === "assistant")?.calls;
        const pending = calls?.find((candidate) => candidate.call.id === item.call_id && candidate.result === undefined);
        if (pending === undefined) {
            throw invalidRequest(
                `${where}.call_id must be the call_id of an unanswered function_call of the last answer (${calls?.map((candidate) => candidate.call.id).join(", ") || "it has none"}).`,
                `${where}.call_id`
            );
        }
        pending.result = typeof item.output === "string" ? item.output : readContent(item.output, `${where}.output`);
        return;
    }
    throw invalidRequest(
        `${where}.type ${describe(type)} is not served by Kvault (it serves message, function_call and function_call_output items); leave it out.`,
        `${where}.type`,
        "unsupported_parameter"
    );
}

function readCall(item: Readonly<Record<string, unknown>>, where: string): ToolCall {
    if (typeof item.call_id !== "string" || item.call_id === "" || item.call_id.length > 256) {
        throw invalidRequest(`${where}.call_id must be a string of 1 to 256 characters.`, `${where}.call_id`);
    }
    if (typeof item.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(item.name)) {
        throw invalidRequest(`${where}.name must be 1 to 64 letters, digits, _ or -.`, `${where}.name`);
    }
    if (typeof item.arguments !== "string") {
        throw invalidRequest(`${where}.arguments must be the arguments as JSON text.`, `${where}.arguments`);
    }
    return { id: item.call_id, name: item.name, arguments: item.arguments };
}

/** A string, or a list of input_text / output_text parts, joined. */
function readContent(content: unknown, where: string): string {
    if (typeof content === "string") {
        return content;
    }
    if (!Array.isArray(content)) {
        throw invalidRequest(`${where} must be a string or a list of input_text parts; got ${describe(content)}.`, where);
    }
    return content
        .map((part: unknown, index: number) => {
            const at = `${where}[${index}]`;
            if (!isRecord(part) || (part.type !== "input_text" && part.type !== "output_text")) {
                throw invalidRequest(
                    `${at} must be an input_text (or output_text) part; Kvault serves text (images and files are not served), leave others out.`,
                    at,
                    "unsupported_parameter"
                );
            }
            refuseUnlisted(part, textPartFields, at);
            if (typeof part.text !== "string") {
                throw invalidRequest(`${at}.text must be a string.`, `${at}.text`);
            }
            return part.text;
        })
        .join("");
}

function refuseUnlisted(value: Readonly<Record<string, unknown>>, served: readonly string[], where: string): void {
    const key = Object.keys(value).find((name) => !served.includes(name));
    if (key !== undefined) {
        throw invalidRequest(
            `${where}.${key.slice(0, 100)} is not served by Kvault (it serves ${served.join(", ")} here); leave it out.`,
            `${where}.${key.slice(0, 100)}`,
            "unsupported_parameter"
        );
    }
}
