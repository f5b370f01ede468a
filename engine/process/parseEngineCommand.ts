import type { EngineCallCommand, EngineCommand, EngineErrorPayload, EngineEvent } from "../../contract/engineProtocol.js";
import { fieldLimits } from "../../contract/limits.js";
import { engineMethods, type EngineMethod } from "../../contract/rpc.js";

/**
 * A command as the engine reads it: a chat's request is what came, its requestId read, the rest for
 * EngineService.chat to check against the turn's one schema (contract/rpc/turnSchemas.ts).
 */
export type ReceivedEngineCommand =
    | Exclude<EngineCommand, { readonly type: "chat" }>
    | { readonly type: "chat"; readonly request: { readonly requestId: string } & Readonly<Record<string, unknown>> };

export type ParsedEngineCommand =
    | { readonly ok: true; readonly command: ReceivedEngineCommand }
    /**
     * `reply` answers the sender when the command named an id to answer to (a chat's requestId, a
     * call's callId); without one there is nobody to tell, and the command is only logged.
     */
    | { readonly ok: false; readonly error: EngineErrorPayload; readonly reply?: EngineEvent };

const commandTypes = ["chat", "cancel", "call", "shutdown"] as const;
const servedMethods = new Set<string>(engineMethods);

/**
 * Reads the envelope of a message from the host: its type and the ids answers go to. The params
 * inside are the host's to check (it checks every call against the RPC spec where the call enters
 * it; a turn is checked again by EngineService.chat, against the same schema), so they pass as they are. Pure and
 * total: whatever JSON or structured clone can carry gets a value back, never an exception, so a
 * bad message costs a log line and maybe an answer, never the engine process.
 */
export function parseEngineCommand(value: unknown): ParsedEngineCommand {
    try {
        return parse(value);
    } catch (error) {
        const message =
            error instanceof EnvelopeError ? error.message : `The command could not be read: ${truncate(describeError(error))}.`;
        return { ok: false, error: { code: "invalid_request", message }, ...safeReplyFor(value, message) };
    }
}

/** A malformed envelope; inside parse only. */
class EnvelopeError extends Error {}

function parse(value: unknown): ParsedEngineCommand {
    if (!isRecord(value)) {
        throw new EnvelopeError(`The command must be an object; got ${describeValue(value)}.`);
    }
    switch (value.type) {
        case "chat": {
            if (!isRecord(value.request)) {
                throw new EnvelopeError(`request must be an object; got ${describeValue(value.request)}.`);
            }
            const requestId = id(value.request.requestId, "requestId");
            return { ok: true, command: { type: "chat", request: { ...value.request, requestId } } };
        }
        case "cancel":
            return { ok: true, command: { type: "cancel", requestId: id(value.requestId, "requestId") } };
        case "call": {
            const callId = id(value.callId, "callId");
            if (typeof value.method !== "string" || !servedMethods.has(value.method)) {
                throw new EnvelopeError(
                    `The call's method is ${describeValue(value.method)}; the engine serves ${[...servedMethods].join(", ")}.`
                );
            }
            return {
                ok: true,
                command: { type: "call", callId, method: value.method as EngineMethod, params: value.params } as EngineCallCommand
            };
        }
        case "shutdown":
            return { ok: true, command: { type: "shutdown" } };
        default:
            throw new EnvelopeError(`The command's type is ${describeValue(value.type)}; expected one of ${commandTypes.join(", ")}.`);
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
    if (command.type === "chat") {
        const requestId = isRecord(command.request) ? recoverId(command.request.requestId) : undefined;
        return requestId === undefined ? {} : { reply: { type: "failed", requestId, error } };
    }
    if (command.type === "call") {
        const callId = recoverId(command.callId);
        return callId === undefined ? {} : { reply: { type: "answer", callId, error } };
    }
    return {};
}

function recoverId(value: unknown): string | undefined {
    return typeof value === "string" && value.length > 0 && value.length <= fieldLimits.maxIdChars ? value : undefined;
}

function id(value: unknown, name: string): string {
    if (typeof value !== "string") {
        throw new EnvelopeError(`${name} must be a string; got ${describeValue(value)}.`);
    }
    if (value === "" || value.length > fieldLimits.maxIdChars) {
        throw new EnvelopeError(
            `${name} has ${value.length.toLocaleString("en-US")} characters; it must have 1 to ${fieldLimits.maxIdChars.toLocaleString("en-US")}.`
        );
    }
    return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
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
