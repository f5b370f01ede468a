// Pure on purpose (no electron): the checks every RPC payload from a renderer passes before it
// reaches the engine, unit-tested alone. The engine checks a chat again when it arrives there
// (parseEngineCommand); this copy refuses garbage one hop sooner and never forwards a field the
// contract does not name.
import type { ChatMessage } from "../../contract/engineProtocol.js";
import { MAX_DOWNLOAD_SOURCE_CHARS } from "../../contract/models.js";
import { MAX_MODEL_PATH_CHARS, rpcMethods, type RpcMethod, type RpcMethods } from "../../contract/rpc.js";
import { InvalidRequestError, commandLimits, turnLimits, validateChatTurn } from "../../engine/index.js";
import { isStoreMethod, parseStoreCall, storeParamFields } from "../../host/store/parseStoreCall.js";

/** A call whose method is known and whose params have the contract's types and sizes. */
export type RpcCall = { [M in RpcMethod]: { readonly method: M; readonly params: RpcMethods[M]["params"] } }[RpcMethod];

/** Top-level fields each method's params may carry; anything else is refused, not ignored. */
const paramFields: { readonly [M in RpcMethod]: readonly string[] } = {
    info: [],
    chat: ["requestId", "workspace", "messages", "sampling"],
    cancel: ["requestId"],
    measure: ["workspace", "messages", "draft"],
    snapshot: [],
    forgetWorkspace: ["workspace"],
    audit: [],
    replayableTurns: [],
    replay: ["requestId"],
    listDrills: [],
    runDrill: ["id"],
    inspectModel: ["path"],
    switchModel: ["model"],
    startDownload: ["source"],
    listDownloads: [],
    cancelDownload: ["id"],
    resumeDownload: ["id"],
    listModels: [],
    forgetModel: ["id", "deleteFile"],
    runCanary: ["fillerTokens"],
    ...storeParamFields
};

const roles = new Set<string>(["system", "user", "assistant"]);

/**
 * Checks `method` and `params` as they arrived over IPC and returns them rebuilt from their known
 * fields. Throws InvalidRequestError (code invalid_request, a message naming the field and the
 * limit) for an unknown method, a wrong type, an empty id, a huge string or list, or an extra field.
 */
export function validateRpcPayload(method: unknown, params: unknown): RpcCall {
    if (typeof method !== "string" || !(rpcMethods as readonly string[]).includes(method)) {
        throw new InvalidRequestError(`Unknown RPC method ${describeValue(method)}; use one of ${rpcMethods.join(", ")}.`);
    }
    const known = method as RpcMethod;
    const fields = record(params, `${known}'s params`);
    for (const key of Object.keys(fields)) {
        if (!paramFields[known].includes(key)) {
            throw new InvalidRequestError(
                `${known} takes no field ${describeValue(key)}; its params are {${paramFields[known].join(", ")}}.`
            );
        }
    }
    // The store's calls have one validator for both hosts (host/store/parseStoreCall.ts).
    if (isStoreMethod(known)) {
        return parseStoreCall(known, fields);
    }
    switch (known) {
        case "info":
        case "snapshot":
        case "audit":
        case "replayableTurns":
        case "listDrills":
        case "listDownloads":
        case "listModels":
            return { method: known, params: {} };
        case "replay":
            return { method: known, params: { requestId: id(fields.requestId, "requestId") } };
        case "runDrill":
            return { method: known, params: { id: id(fields.id, "id", "name one of listDrills' drills") } };
        case "runCanary":
            return { method: known, params: fields.fillerTokens === undefined ? {} : { fillerTokens: fillerTokens(fields.fillerTokens) } };
        case "cancel":
            return { method: known, params: { requestId: id(fields.requestId, "requestId") } };
        case "inspectModel":
            return { method: known, params: { path: modelPath(fields.path, "path") } };
        case "switchModel":
            return { method: known, params: { model: modelPath(fields.model, "model") } };
        case "startDownload":
            return { method: known, params: { source: downloadSource(fields.source) } };
        case "cancelDownload":
        case "resumeDownload":
            return { method: known, params: { id: id(fields.id, "id", "name one of listDownloads' downloads") } };
        case "forgetModel": {
            if (fields.deleteFile !== undefined && typeof fields.deleteFile !== "boolean") {
                throw new InvalidRequestError(`deleteFile must be true or false; got ${describeValue(fields.deleteFile)}.`);
            }
            const model = id(fields.id, "id", "name one of listModels' models");
            return {
                method: known,
                params: fields.deleteFile === undefined ? { id: model } : { id: model, deleteFile: fields.deleteFile }
            };
        }
        case "forgetWorkspace":
            return { method: known, params: { workspace: workspace(fields.workspace) } };
        case "measure": {
            const messages = conversation(fields.messages);
            const draft = string(fields.draft, "draft", turnLimits.maxMessageChars);
            checkConversationChars(messages, draft);
            return { method: known, params: { workspace: workspace(fields.workspace), messages, draft } };
        }
        case "chat": {
            const requestId = id(fields.requestId, "requestId");
            const messages = conversation(fields.messages);
            checkConversationChars(messages, "");
            // Sampling ranges and "the last message is the user's" have one home: the engine's validator.
            return {
                method: known,
                params: validateChatTurn({ requestId, workspace: workspace(fields.workspace), messages, sampling: fields.sampling })
            };
        }
    }
}

function conversation(value: unknown): ChatMessage[] {
    if (!Array.isArray(value) || value.length > turnLimits.maxMessages) {
        throw new InvalidRequestError(
            `messages must be a list of at most ${turnLimits.maxMessages.toLocaleString("en-US")} messages; got ${describeValue(value)}.`
        );
    }
    const messages: ChatMessage[] = [];
    // A loop, not map: structured clone keeps a sparse array's holes, and map would skip them.
    for (let index = 0; index < value.length; index++) {
        const message = record(value[index], `messages[${index}]`);
        if (typeof message.role !== "string" || !roles.has(message.role)) {
            throw new InvalidRequestError(
                `messages[${index}].role must be "system", "user" or "assistant"; got ${describeValue(message.role)}.`
            );
        }
        messages.push({
            role: message.role as ChatMessage["role"],
            content: string(message.content, `messages[${index}].content`, turnLimits.maxMessageChars)
        });
    }
    return messages;
}

function checkConversationChars(messages: readonly ChatMessage[], draft: string): void {
    const numChars = messages.reduce((sum, message) => sum + message.content.length, draft.length);
    if (numChars > commandLimits.maxConversationChars) {
        throw new InvalidRequestError(
            `The conversation has ${numChars.toLocaleString("en-US")} characters; the limit is ${commandLimits.maxConversationChars.toLocaleString("en-US")}. Start a new chat.`
        );
    }
}

function id(value: unknown, name: string, remedy = "give each turn its own id"): string {
    const text = string(value, name, commandLimits.maxIdChars);
    if (text === "") {
        throw new InvalidRequestError(`${name} is empty; ${remedy}.`);
    }
    return text;
}

/** The canary checks the range against the window; here only the type. */
function fillerTokens(value: unknown): number {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
        throw new InvalidRequestError(`fillerTokens must be a whole number of at least 1; got ${describeValue(value)}.`);
    }
    return value;
}

function modelPath(value: unknown, name: string): string {
    const text = string(value, name, MAX_MODEL_PATH_CHARS);
    if (text.trim() === "") {
        throw new InvalidRequestError(`${name} is empty; give the full path of a .gguf file, or "tiny" for the built-in demo model.`);
    }
    return text;
}

function downloadSource(value: unknown): string {
    const text = string(value, "source", MAX_DOWNLOAD_SOURCE_CHARS);
    if (text.trim() === "") {
        throw new InvalidRequestError(
            "source is empty; give a model URL (http:// or https://) or a Hugging Face reference (hf:owner/repo:quant)."
        );
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

function record(value: unknown, name: string): Record<string, unknown> {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw new InvalidRequestError(`${name} must be an object; got ${describeValue(value)}.`);
    }
    return value as Record<string, unknown>;
}

/** A short, bounded description for a message: never echoes a huge payload back. */
function describeValue(value: unknown): string {
    if (value === null) {
        return "null";
    }
    if (Array.isArray(value)) {
        return `a list of ${value.length.toLocaleString("en-US")}`;
    }
    if (typeof value === "string") {
        return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length.toLocaleString("en-US")} characters`;
    }
    if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
        return String(value);
    }
    return typeof value === "object" ? "an object" : typeof value;
}
