// Ollama's chat messages, each read by a valibot strict object: role, content, and the tool and
// image fields Kvault knows and refuses unless they are empty.
import type { ChatMessage } from "../../../contract/engineProtocol.js";
import { turnLimits } from "../../../contract/limits.js";
import * as v from "valibot";
import { readApiBody, refusedField, requiredReaderField, textField } from "../apiBodySchema.js";
import { describe, strictObject } from "../bodyFields.js";
import { invalidRequest } from "../OpenAiError.js";

/** A list field's neutral value: empty. */
export const neutralList = (value: unknown): boolean => Array.isArray(value) && value.length === 0;

/** `messages`: 1 to turnLimits.maxMessages, each read by its schema, the last one the user's (the model answers it). */
export function parseOllamaMessages(value: unknown): ChatMessage[] {
    if (!Array.isArray(value) || value.length === 0 || value.length > turnLimits.maxMessages) {
        throw invalidRequest(`messages must be a list of 1 to ${turnLimits.maxMessages} messages.`, "messages");
    }
    const messages = value.map((item: unknown, index) => parseMessage(item, index));
    if (messages.at(-1)!.role !== "user") {
        throw invalidRequest('The last message must have role "user": the model answers it.', `messages[${messages.length - 1}].role`);
    }
    return messages;
}

const messageFields = ["role", "content", "images", "tool_calls", "thinking", "tool_name"];

/** One message's schema, its fields in the order they are checked; `index` names it in messages. */
const messageSchema = (index: number) => {
    const at = `messages[${index}]`;
    const withoutTools = (name: string) =>
        refusedField(`${at}.${name}`, neutralList, `Kvault runs text chats without tools; leave ${name} out.`);
    const emptyOnly = (name: string) => refusedField(`${at}.${name}`, (value) => value === "", `leave ${name} out.`);
    return v.strictObject(
        {
            images: withoutTools("images"),
            tool_calls: withoutTools("tool_calls"),
            thinking: emptyOnly("thinking"),
            tool_name: emptyOnly("tool_name"),
            role: requiredReaderField((role): ChatMessage["role"] => {
                if (role !== "system" && role !== "user" && role !== "assistant") {
                    throw invalidRequest(`${at}.role must be "system", "user" or "assistant"; got ${describe(role)}.`, `${at}.role`);
                }
                return role;
            }),
            content: textField(`${at}.content`)
        },
        (issue) => `${at}.${String(issue.input)} is not a field Kvault serves here; leave it out.`
    );
};

function parseMessage(item: unknown, index: number): ChatMessage {
    strictObject(item, messageFields, `messages[${index}]`, `messages[${index}].`);
    const message = readApiBody(messageSchema(index), item, { unlistedCode: null, at: `messages[${index}]` });
    return { role: message.role, content: message.content ?? "" };
}
