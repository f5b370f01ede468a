// Anthropic's `system` and `messages` read into the engine's conversation: text blocks are a
// message's text, an assistant's `tool_use` blocks its calls, and a user's `tool_result` blocks
// are folded into the calls they answer (the engine's ChatMessage carries a call with its result,
// as a chat template renders it). Any other block (image, document, thinking…) is refused by name.
import type { ChatMessage, ToolCall } from "../../../contract/engineProtocol.js";
import { isRecord } from "../../../contract/rpc/fieldSchemas.js";
import { describe } from "../bodyFields.js";
import { invalidRequest } from "../OpenAiError.js";

interface PendingCall {
    readonly call: ToolCall;
    result?: string;
}

interface Entry {
    readonly message: ChatMessage;
    readonly calls?: PendingCall[];
    readonly index: number;
}

const messageFields = ["role", "content"];
/** `cache_control` is knowingly ignored: Kvault keeps every workspace's prefix without being asked. */
const textBlockFields = ["type", "text", "cache_control", "citations"];
const toolUseFields = ["type", "id", "name", "input", "cache_control"];
const toolResultFields = ["type", "tool_use_id", "content", "is_error", "cache_control"];

/** The system prompt (a string or text blocks) and the messages; the last is the user's, or tool results answering every call before it. */
export function parseAnthropicMessages(value: unknown, system: unknown): ChatMessage[] {
    if (!Array.isArray(value) || value.length === 0) {
        throw invalidRequest(`messages must be a non-empty list of messages; got ${describe(value)}.`, "messages");
    }
    const out: Entry[] = [];
    value.forEach((item: unknown, index: number) => {
        const where = `messages[${index}]`;
        if (!isRecord(item)) {
            throw invalidRequest(`${where} must be an object {role, content}.`, where);
        }
        refuseUnlisted(item, messageFields, where, "a message is its role and its content");
        if (item.role !== "user" && item.role !== "assistant") {
            throw invalidRequest(`${where}.role must be "user" or "assistant"; got ${describe(item.role)}.`, `${where}.role`);
        }
        const blocks = readBlocks(item.content, `${where}.content`);
        if (item.role === "assistant") {
            const calls = blocks.flatMap((block, number) =>
                block.type === "tool_use" ? [readToolUse(block, `${where}.content[${number}]`)] : []
            );
            out.push({
                message: { role: "assistant", content: joinText(blocks, "assistant", where) },
                ...(calls.length === 0 ? {} : { calls }),
                index
            });
            return;
        }
        blocks.forEach((block, number) => {
            if (block.type === "tool_result") {
                answerCall(out.at(-1), block, `${where}.content[${number}]`);
            }
        });
        const text = joinText(blocks, "user", where);
        if (text !== "" || blocks.every((block) => block.type !== "tool_result")) {
            out.push({ message: { role: "user", content: text }, index });
        }
    });
    const messages = out.map(({ message, calls, index }, position) => {
        if (calls === undefined) {
            return message;
        }
        const unanswered = calls.find((pending) => pending.result === undefined);
        if (unanswered !== undefined && position < out.length - 1) {
            throw invalidRequest(
                `messages[${index}] calls the tool ${unanswered.call.name} (id ${unanswered.call.id}) and no tool_result answers it; send its result as a tool_result block in the next user message.`,
                `messages[${index}].content`
            );
        }
        return {
            ...message,
            toolCalls: calls.map((pending) => (pending.result === undefined ? pending.call : { ...pending.call, result: pending.result }))
        };
    });
    const last = out.at(-1);
    const answered = last?.calls !== undefined && last.calls.every((pending) => pending.result !== undefined);
    if (last === undefined || (last.message.role !== "user" && !answered)) {
        throw invalidRequest(
            `The last message must be the user's (text, or tool_result blocks answering every tool_use before it); Kvault does not continue a prefilled assistant message.`,
            `messages[${value.length - 1}]`
        );
    }
    const systemText = readSystem(system);
    return systemText === undefined ? messages : [{ role: "system", content: systemText }, ...messages];
}

type Block = Readonly<Record<string, unknown>> & { readonly type: "text" | "tool_use" | "tool_result" };

function readBlocks(content: unknown, where: string): Block[] {
    if (typeof content === "string") {
        return [{ type: "text", text: content }];
    }
    if (!Array.isArray(content)) {
        throw invalidRequest(`${where} must be a string or a list of content blocks; got ${describe(content)}.`, where);
    }
    return content.map((block: unknown, number: number) => {
        const at = `${where}[${number}]`;
        if (!isRecord(block)) {
            throw invalidRequest(`${at} must be a content block {type, …}.`, at);
        }
        if (block.type === "text") {
            refuseUnlisted(block, textBlockFields, at, "a text block is its text");
            if (typeof block.text !== "string") {
                throw invalidRequest(`${at}.text must be a string.`, `${at}.text`);
            }
        } else if (block.type === "tool_use") {
            refuseUnlisted(block, toolUseFields, at, "a tool_use block is its id, name and input");
        } else if (block.type === "tool_result") {
            refuseUnlisted(block, toolResultFields, at, "a tool_result block is its tool_use_id, content and is_error");
        } else {
            throw invalidRequest(
                `${at}.type ${describe(block.type)} is not served by Kvault (it serves text, tool_use and tool_result blocks); leave it out.`,
                `${at}.type`
            );
        }
        return block as Block;
    });
}

/** A message's text blocks, joined; a tool_use in a user message or a tool_result in an assistant's is refused. */
function joinText(blocks: readonly Block[], role: "user" | "assistant", where: string): string {
    const misplaced = blocks.findIndex((block) => block.type === (role === "user" ? "tool_use" : "tool_result"));
    if (misplaced >= 0) {
        throw invalidRequest(
            `${where}.content[${misplaced}] is a ${blocks[misplaced]!.type} block in a ${role} message; tool_use blocks are the assistant's, tool_result blocks the user's.`,
            `${where}.content[${misplaced}]`
        );
    }
    return blocks.map((block) => (block.type === "text" ? (block.text as string) : "")).join("");
}

function readToolUse(block: Block, where: string): PendingCall {
    if (typeof block.id !== "string" || block.id === "" || block.id.length > 256) {
        throw invalidRequest(`${where}.id must be a string of 1 to 256 characters.`, `${where}.id`);
    }
    if (typeof block.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(block.name)) {
        throw invalidRequest(`${where}.name must be 1 to 64 letters, digits, _ or -.`, `${where}.name`);
    }
    if (!isRecord(block.input)) {
        throw invalidRequest(`${where}.input must be an object: the tool's arguments.`, `${where}.input`);
    }
    return { call: { id: block.id, name: block.name, arguments: JSON.stringify(block.input) } };
}

/** A tool_result block: the result of one call of the assistant message just before its user message. */
function answerCall(previous: Entry | undefined, block: Block, where: string): void {
    const calls = previous?.message.role === "assistant" ? previous.calls : undefined;
    if (calls === undefined) {
        throw invalidRequest(
            `${where} is a tool_result, but the message before it is no assistant message with tool_use blocks; a tool_result answers one of those.`,
            where
        );
    }
    const pending = calls.find((candidate) => candidate.call.id === block.tool_use_id);
    if (pending === undefined || pending.result !== undefined) {
        throw invalidRequest(
            `${where}.tool_use_id must be the id of an unanswered tool_use of the assistant message before it (${calls.map((candidate) => candidate.call.id).join(", ")}).`,
            `${where}.tool_use_id`
        );
    }
    const text = readResultContent(block.content, `${where}.content`);
    if (block.is_error !== undefined && typeof block.is_error !== "boolean") {
        throw invalidRequest(`${where}.is_error must be true or false.`, `${where}.is_error`);
    }
    pending.result = block.is_error === true ? `Error: ${text}` : text;
}

function readResultContent(content: unknown, where: string): string {
    if (content === undefined || content === null) {
        return "";
    }
    return readBlocks(content, where)
        .map((block, number) => {
            if (block.type !== "text") {
                throw invalidRequest(`${where}[${number}] must be a text block; a tool's result is text here.`, `${where}[${number}]`);
            }
            return block.text as string;
        })
        .join("");
}

function readSystem(system: unknown): string | undefined {
    if (system === undefined || system === null) {
        return undefined;
    }
    if (typeof system === "string") {
        return system === "" ? undefined : system;
    }
    const text = readBlocks(system, "system")
        .map((block, number) => {
            if (block.type !== "text") {
                throw invalidRequest(`system[${number}] must be a text block.`, `system[${number}]`);
            }
            return block.text as string;
        })
        .join("\n");
    return text === "" ? undefined : text;
}

/** Refuses the first key of `value` not in `served`, by name, saying what the object is. */
export function refuseUnlisted(value: Readonly<Record<string, unknown>>, served: readonly string[], where: string, what: string): void {
    const key = Object.keys(value).find((name) => !served.includes(name));
    if (key !== undefined) {
        throw invalidRequest(
            `${where}.${key.slice(0, 100)} is not served by Kvault (${what}); leave it out.`,
            `${where}.${key.slice(0, 100)}`,
            "unsupported_parameter"
        );
    }
}
