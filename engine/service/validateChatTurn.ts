import type { ChatMessage, ChatTurnRequest, GrammarSpec, JsonObject, RawPrompt, TokenBias } from "../../contract/engineProtocol.js";
import { turnLimits } from "../../contract/limits.js";
import { MAX_TOKEN_ID, grammarSchemaProblem } from "../../contract/rpc/turnSchemas.js";
import { CANARY_WORKSPACE_PREFIX, isCanaryWorkspace } from "../canary/canaryMarkers.js";
import { InvalidRequestError } from "../request/requestErrors.js";
import { isAnswerable, readToolCallGrammar, readToolCalls, readTools } from "./validateTools.js";

const roles = new Set(["system", "user", "assistant"]);

/**
 * Checks every field of a turn that crossed a process boundary: types, ranges, sizes. A bad field
 * is an `InvalidRequestError` naming it; it never reaches the engine (poison payload, docs/FAILURE-MODES.md).
 */
export function validateChatTurn(value: unknown): ChatTurnRequest {
    const turn = record(value, "request");
    const requestId = string(turn.requestId, "requestId", 256);
    const workspace = string(turn.workspace, "workspace", turnLimits.maxWorkspaceChars);
    if (workspace === "") {
        throw new InvalidRequestError("workspace is empty; name the workspace the turn belongs to.");
    }
    if (isCanaryWorkspace(workspace)) {
        // the canary's temporary workspaces are nobody's prefix cache
        throw new InvalidRequestError(
            `workspace names beginning with "${CANARY_WORKSPACE_PREFIX}" are the canary probe's; name the workspace otherwise.`
        );
    }
    const prompt = turn.prompt === undefined ? undefined : rawPrompt(turn.prompt);
    const minMessages = prompt === undefined ? 1 : 0;
    const maxMessages = prompt === undefined ? turnLimits.maxMessages : 0;
    if (!Array.isArray(turn.messages) || turn.messages.length < minMessages || turn.messages.length > maxMessages) {
        throw new InvalidRequestError(
            prompt === undefined
                ? `messages must be a list of 1 to ${turnLimits.maxMessages} messages.`
                : "messages must be an empty list when a raw prompt is given."
        );
    }
    const messages: ChatMessage[] = turn.messages.map((item: unknown, index: number) => {
        const message = record(item, `messages[${index}]`);
        if (typeof message.role !== "string" || !roles.has(message.role)) {
            throw new InvalidRequestError(`messages[${index}].role must be "system", "user" or "assistant".`);
        }
        const toolCalls = readToolCalls(message, `messages[${index}]`);
        return {
            role: message.role as ChatMessage["role"],
            content: string(message.content, `messages[${index}].content`, turnLimits.maxMessageChars),
            ...(toolCalls === undefined ? {} : { toolCalls })
        };
    });
    if (prompt === undefined && !isAnswerable(messages.at(-1)!)) {
        throw new InvalidRequestError(
            "The last message must be the user's, or an assistant's tool calls with all their results: the engine answers it."
        );
    }
    const tools = turn.tools === undefined ? undefined : readTools(turn.tools);

    const sampling = record(turn.sampling, "sampling");
    const temperature = number(sampling.temperature, "sampling.temperature", 0, 2);
    const maxTokens = integer(sampling.maxTokens, "sampling.maxTokens", 1, 1_048_576);
    const topP = sampling.topP === undefined ? undefined : number(sampling.topP, "sampling.topP", 0, 1);
    const topK = sampling.topK === undefined ? undefined : integer(sampling.topK, "sampling.topK", 0, 1_000_000);
    const seed = sampling.seed === undefined ? undefined : integer(sampling.seed, "sampling.seed", 0, 2 ** 32 - 1);
    let stop: string[] | undefined;
    if (sampling.stop !== undefined) {
        if (!Array.isArray(sampling.stop) || sampling.stop.length > turnLimits.maxStopStrings) {
            throw new InvalidRequestError(`sampling.stop must be a list of at most ${turnLimits.maxStopStrings} strings.`);
        }
        stop = sampling.stop
            .map((item: unknown, index: number) => string(item, `sampling.stop[${index}]`, turnLimits.maxStopChars))
            .filter((item: string) => item !== "");
    }
    let logprobs: { top: number } | undefined;
    if (sampling.logprobs !== undefined) {
        const asked = record(sampling.logprobs, "sampling.logprobs");
        logprobs = { top: integer(asked.top, "sampling.logprobs.top", 0, 20) };
    }
    const optionalNumber = (key: string, min: number, max: number): number | undefined =>
        sampling[key] === undefined ? undefined : number(sampling[key], `sampling.${key}`, min, max);
    const minP = optionalNumber("minP", 0, 1);
    const repeatPenalty = optionalNumber("repeatPenalty", 0, 2);
    const presencePenalty = optionalNumber("presencePenalty", -2, 2);
    const frequencyPenalty = optionalNumber("frequencyPenalty", -2, 2);
    const repeatLastTokens =
        sampling.repeatLastTokens === undefined ? undefined : integer(sampling.repeatLastTokens, "sampling.repeatLastTokens", 0, 4096);
    const tokenBias = sampling.tokenBias === undefined ? undefined : readTokenBias(sampling.tokenBias);
    const grammar = sampling.grammar === undefined ? undefined : readGrammar(sampling.grammar);
    return {
        requestId,
        workspace,
        messages,
        ...(prompt === undefined ? {} : { prompt }),
        ...(tools === undefined ? {} : { tools }),
        ...(turn.keepKvOnDisk === true ? { keepKvOnDisk: true } : {}),
        sampling: {
            temperature,
            maxTokens,
            topP,
            topK,
            seed,
            stop,
            logprobs,
            minP,
            repeatPenalty,
            presencePenalty,
            frequencyPenalty,
            repeatLastTokens,
            tokenBias,
            grammar
        }
    };
}

function readTokenBias(value: unknown): TokenBias[] {
    if (!Array.isArray(value) || value.length > turnLimits.maxTokenBiases) {
        throw new InvalidRequestError(`sampling.tokenBias must be a list of at most ${turnLimits.maxTokenBiases} token biases.`);
    }
    return value.map((item: unknown, index: number) => {
        const entry = record(item, `sampling.tokenBias[${index}]`);
        return {
            token: integer(entry.token, `sampling.tokenBias[${index}].token`, 0, MAX_TOKEN_ID),
            bias: number(entry.bias, `sampling.tokenBias[${index}].bias`, -100, 100)
        };
    });
}

function readGrammar(value: unknown): GrammarSpec {
    const grammar = record(value, "sampling.grammar");
    if (grammar.kind === "json") {
        return { kind: "json" };
    }
    if (grammar.kind === "toolCalls") {
        return readToolCallGrammar(grammar);
    }
    if (grammar.kind !== "jsonSchema") {
        throw new InvalidRequestError(
            `sampling.grammar.kind must be "json", "jsonSchema" or "toolCalls"; got ${JSON.stringify(grammar.kind) ?? String(grammar.kind)}.`
        );
    }
    const problem = grammarSchemaProblem(grammar.schema);
    if (problem !== undefined) {
        throw new InvalidRequestError(`sampling.grammar.schema ${problem}`);
    }
    return { kind: "jsonSchema", schema: grammar.schema as JsonObject };
}

/** `{text}` or `{tokens}`: the text within a message's limit, the tokens a non-empty list of whole numbers (the vocabulary is the engine's to check). */
function rawPrompt(value: unknown): RawPrompt {
    const prompt = record(value, "prompt");
    if (Object.keys(prompt).length !== 1 || (prompt.text === undefined) === (prompt.tokens === undefined)) {
        throw new InvalidRequestError("prompt must be {text} or {tokens}, one of the two.");
    }
    if (prompt.tokens === undefined) {
        return { text: string(prompt.text, "prompt.text", turnLimits.maxMessageChars) };
    }
    if (!Array.isArray(prompt.tokens) || prompt.tokens.length === 0 || prompt.tokens.length > turnLimits.maxMessageChars) {
        throw new InvalidRequestError(
            `prompt.tokens must be a list of 1 to ${turnLimits.maxMessageChars.toLocaleString("en-US")} token ids.`
        );
    }
    return { tokens: prompt.tokens.map((token: unknown, index: number) => integer(token, `prompt.tokens[${index}]`, 0, MAX_TOKEN_ID)) };
}

function record(value: unknown, name: string): Record<string, unknown> {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw new InvalidRequestError(`${name} must be an object.`);
    }
    return value as Record<string, unknown>;
}

function string(value: unknown, name: string, maxChars: number): string {
    if (typeof value !== "string") {
        throw new InvalidRequestError(`${name} must be a string.`);
    }
    if (value.length > maxChars) {
        throw new InvalidRequestError(
            `${name} has ${value.length.toLocaleString("en-US")} characters; the limit is ${maxChars.toLocaleString("en-US")}.`
        );
    }
    return value;
}

function number(value: unknown, name: string, min: number, max: number): number {
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
        throw new InvalidRequestError(`${name} must be a number in [${min}, ${max}]; got ${JSON.stringify(value) ?? String(value)}.`);
    }
    return value;
}

function integer(value: unknown, name: string, min: number, max: number): number {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
        throw new InvalidRequestError(`${name} must be a whole number in [${min}, ${max}]; got ${JSON.stringify(value) ?? String(value)}.`);
    }
    return value;
}
