import {
    callAnswerTypes,
    type CallCommandType,
    type ChatMessage,
    type EngineCommand,
    type EngineErrorPayload,
    type EngineEvent
} from "../../contract/engineProtocol.js";
import { InvalidRequestError } from "../request/requestErrors.js";
import { turnLimits, validateChatTurn } from "../service/validateChatTurn.js";

/** Limits on a command beyond what one turn's fields allow (validateChatTurn's `turnLimits`). */
export const commandLimits = {
    /** requestId, callId and a drill's id, in characters. */
    maxIdChars: 256,
    /**
     * All message contents (and a measure's draft) together, in characters: four messages at the
     * per-message limit. No window the engine can hold needs more text than this.
     */
    maxConversationChars: 16_000_000
} as const;

export type ParsedEngineCommand =
    | { readonly ok: true; readonly command: EngineCommand }
    /**
     * `reply` answers the sender when the command named an id to answer to (a chat's requestId, a
     * call's callId); without one there is nobody to tell, and the command is only logged.
     */
    | { readonly ok: false; readonly error: EngineErrorPayload; readonly reply?: EngineEvent };

const commandTypes = new Set<string>([
    "chat",
    "cancel",
    "measure",
    "snapshot",
    "forgetWorkspace",
    "audit",
    "replayableTurns",
    "replay",
    "listDrills",
    "runDrill",
    "runCanary",
    "shutdown"
]);
const roles = new Set<string>(["system", "user", "assistant"]);

/**
 * Checks a message that crossed the process boundary and rebuilds it from its known fields only.
 * Pure and total: whatever JSON or structured clone can carry (wrong types, huge strings, unknown
 * types and fields, nested garbage) gets a value back, never an exception, so a bad command costs
 * a log line and maybe an answer, never the engine process.
 */
export function parseEngineCommand(value: unknown): ParsedEngineCommand {
    try {
        return parse(value);
    } catch (error) {
        const message =
            error instanceof InvalidRequestError
                ? truncate(error.message)
                : `The command could not be read: ${truncate(describeError(error))}.`;
        return { ok: false, error: { code: "invalid_request", message }, ...safeReplyFor(value, message) };
    }
}

function parse(value: unknown): ParsedEngineCommand {
    const command = record(value, "The command");
    const type = command.type;
    if (typeof type !== "string" || !commandTypes.has(type)) {
        throw new InvalidRequestError(`The command's type is ${describeValue(type)}; expected one of ${[...commandTypes].join(", ")}.`);
    }
    switch (type) {
        case "chat": {
            if (isRecord(command.request)) {
                refuseHoles(command.request.messages, "messages");
            }
            const request = validateChatTurn(command.request);
            checkConversationChars(request.messages, "");
            return { ok: true, command: { type, request } };
        }
        case "cancel":
            return { ok: true, command: { type, requestId: id(command.requestId, "requestId") } };
        case "measure": {
            const callId = id(command.callId, "callId");
            const messages = conversation(command.messages);
            const draft = string(command.draft, "draft", turnLimits.maxMessageChars);
            checkConversationChars(messages, draft);
            return { ok: true, command: { type, callId, workspace: workspace(command.workspace), messages, draft } };
        }
        case "snapshot":
            return { ok: true, command: { type, callId: id(command.callId, "callId") } };
        case "forgetWorkspace":
            return { ok: true, command: { type, callId: id(command.callId, "callId"), workspace: workspace(command.workspace) } };
        case "audit":
        case "replayableTurns":
        case "listDrills":
            return { ok: true, command: { type, callId: id(command.callId, "callId") } };
        case "replay":
            return { ok: true, command: { type, callId: id(command.callId, "callId"), requestId: id(command.requestId, "requestId") } };
        case "runDrill":
            return { ok: true, command: { type, callId: id(command.callId, "callId"), drillId: id(command.drillId, "drillId") } };
        case "runCanary": {
            const callId = id(command.callId, "callId");
            if (command.fillerTokens === undefined) {
                return { ok: true, command: { type, callId } };
            }
            // The range against the window is the canary's to check: it knows the window and the markers.
            if (typeof command.fillerTokens !== "number" || !Number.isSafeInteger(command.fillerTokens) || command.fillerTokens < 1) {
                throw new InvalidRequestError(
                    `fillerTokens must be a whole number of at least 1; got ${describeValue(command.fillerTokens)}.`
                );
            }
            return { ok: true, command: { type, callId, fillerTokens: command.fillerTokens } };
        }
        default:
            return { ok: true, command: { type: "shutdown" } };
    }
}

function safeReplyFor(value: unknown, message: string): { reply?: EngineEvent } {
    try {
        return replyFor(value, message);
    } catch {
        return {}; // a field that throws when read names nobody
    }
}

/** Whom a refused command can be answered to, if anyone: the event its sender waits for. */
function replyFor(value: unknown, message: string): { reply?: EngineEvent } {
    const error: EngineErrorPayload = { code: "invalid_request", message };
    const command = isRecord(value) ? value : {};
    switch (command.type) {
        case "chat": {
            const requestId = isRecord(command.request) ? recoverId(command.request.requestId) : undefined;
            return requestId === undefined ? {} : { reply: { type: "failed", requestId, error } };
        }
        default: {
            if (typeof command.type !== "string" || !Object.hasOwn(callAnswerTypes, command.type)) {
                return {};
            }
            const callId = recoverId(command.callId);
            if (callId === undefined) {
                return {};
            }
            return { reply: { type: callAnswerTypes[command.type as CallCommandType], callId, error } };
        }
    }
}

function recoverId(value: unknown): string | undefined {
    return typeof value === "string" && value.length > 0 && value.length <= commandLimits.maxIdChars ? value : undefined;
}

function conversation(value: unknown): ChatMessage[] {
    if (!Array.isArray(value) || value.length > turnLimits.maxMessages) {
        throw new InvalidRequestError(`messages must be a list of at most ${turnLimits.maxMessages.toLocaleString("en-US")} messages.`);
    }
    const messages: ChatMessage[] = [];
    for (let index = 0; index < value.length; index++) {
        // a loop, not map: map skips a sparse array's holes
        const message = record(value[index], `messages[${index}]`);
        if (typeof message.role !== "string" || !roles.has(message.role)) {
            throw new InvalidRequestError(`messages[${index}].role must be "system", "user" or "assistant".`);
        }
        messages.push({
            role: message.role as ChatMessage["role"],
            content: string(message.content, `messages[${index}].content`, turnLimits.maxMessageChars)
        });
    }
    return messages;
}

/** validateChatTurn maps over the list, which skips a sparse array's holes (structured clone keeps them). */
function refuseHoles(value: unknown, name: string): void {
    if (!Array.isArray(value) || value.length > turnLimits.maxMessages) {
        return;
    } // validateChatTurn refuses these with its own message
    for (let index = 0; index < value.length; index++) {
        if (!(index in value)) {
            throw new InvalidRequestError(`${name}[${index}] must be an object; got nothing.`);
        }
    }
}

function checkConversationChars(messages: readonly ChatMessage[], draft: string): void {
    const numChars = messages.reduce((sum, message) => sum + message.content.length, draft.length);
    if (numChars > commandLimits.maxConversationChars) {
        throw new InvalidRequestError(
            `The conversation has ${numChars.toLocaleString("en-US")} characters; the limit is ${commandLimits.maxConversationChars.toLocaleString("en-US")}. Start a new chat.`
        );
    }
}

function id(value: unknown, name: string): string {
    const text = string(value, name, commandLimits.maxIdChars);
    if (text === "") {
        throw new InvalidRequestError(`${name} is empty.`);
    }
    return text;
}

function workspace(value: unknown): string {
    const text = string(value, "workspace", turnLimits.maxWorkspaceChars);
    if (text === "") {
        throw new InvalidRequestError("workspace is empty; name the workspace.");
    }
    return text;
}

function record(value: unknown, name: string): Record<string, unknown> {
    if (!isRecord(value)) {
        throw new InvalidRequestError(`${name} must be an object; got ${describeValue(value)}.`);
    }
    return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

function string(value: unknown, name: string, maxChars: number): string {
    if (typeof value !== "string") {
        throw new InvalidRequestError(`${name} must be a string; got ${describeValue(value)}.`);
    }
    if (value.length > maxChars) {
        throw new InvalidRequestError(
            `${name} has ${value.length.toLocaleString("en-US")} characters; the limit is ${maxChars.toLocaleString("en-US")}.`
        );
    }
    return value;
}

/** A short, bounded description of a value for an error message: never echoes a huge payload. */
function describeValue(value: unknown): string {
    if (value === null) {
        return "null";
    }
    if (Array.isArray(value)) {
        return "a list";
    }
    if (typeof value === "string") {
        return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length.toLocaleString("en-US")} characters`;
    }
    if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
        return String(value);
    }
    return typeof value === "object" ? "an object" : typeof value;
}

function describeError(error: unknown): string {
    return error instanceof Error ? error.message : typeof error;
}

/** Error messages may quote a field's value; a megabyte of it helps nobody reading a log. */
function truncate(text: string, maxChars = 500): string {
    return text.length <= maxChars ? text : `${text.slice(0, maxChars)}… (${text.length.toLocaleString("en-US")} characters)`;
}
