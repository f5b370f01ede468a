// A chat turn's one schema (contract/engineProtocol.ts ChatTurnRequest), run where a turn enters
// the host (the RPC's chat, rpcSpec.ts) and again where it enters the engine (EngineService.chat):
// defence in depth with one implementation (docs/FAILURE-MODES.md, poison payload). The engine's
// own further checks are of what only it knows (the window, the vocabulary).
import * as v from "valibot";
import { formatBytes, rpcLimits, turnLimits, utf8ByteLength } from "../limits.js";
import type { ChatMessage, ChatTurnRequest, GrammarSpec, RawPrompt } from "../engineProtocol.js";
import { CANARY_WORKSPACE_PREFIX } from "../isolation.js";
import { fieldLimits } from "../limits.js";
import { describeValue, integer, isRecord, list, nonEmptyText, number, oneOf, record, text } from "./fieldSchemas.js";
import { enforceableSchema, isToolCallGrammar, toolCallGrammarSchema, toolCallsSchema, toolsSchema } from "./toolSchemas.js";

export { grammarSchemaProblem, jsonObjectProblem } from "./grammarSchemaProblem.js";

export const idSchema = (remedy = "give each turn its own id") => nonEmptyText(fieldLimits.maxIdChars, remedy);

export const workspaceSchema = nonEmptyText(turnLimits.maxWorkspaceChars, "name the workspace");

/** A turn's workspace: never one of the canary probe's temporary ones, so a canary workspace is nobody's prefix cache. */
const turnWorkspaceSchema = v.pipe(
    workspaceSchema,
    v.check(
        (workspace) => !workspace.startsWith(CANARY_WORKSPACE_PREFIX),
        `names beginning with "${CANARY_WORKSPACE_PREFIX}" are the canary probe's; name the workspace otherwise.`
    )
);

const messageSchema = record({
    role: oneOf(["system", "user", "assistant"] as const),
    content: text(turnLimits.maxMessageChars)
});

/** Messages of a measure or a tokenization: role and content. */
export const messagesSchema = (minItems: number) => list(messageSchema, { minItems, maxItems: turnLimits.maxMessages, what: "messages" });

/** A turn's message: role, content, and an assistant's tool calls. */
const turnMessageSchema = v.pipe(
    record({
        role: oneOf(["system", "user", "assistant"] as const),
        content: text(turnLimits.maxMessageChars),
        toolCalls: v.optional(toolCallsSchema)
    }),
    v.check(
        (message) => message.toolCalls === undefined || message.role === "assistant",
        (issue) => `toolCalls is an assistant message's; this message's role is ${describeValue((issue.input as { role: unknown }).role)}.`
    )
) as v.GenericSchema<unknown, ChatMessage>;

/** The largest token id a bias may name (llama.cpp's ids are int32); the engine checks it against the model's vocabulary. */
export const MAX_TOKEN_ID = 2 ** 31 - 1;

/** `{text}` or `{tokens}`, one of the two: the text within a message's limit, the tokens 1 or more ids (the vocabulary is the engine's to check). */
const rawPromptSchema: v.GenericSchema<unknown, RawPrompt> = v.pipe(
    v.custom<Record<string, unknown>>(
        (value) => isRecord(value) && Object.keys(value).length === 1 && (value.text === undefined) !== (value.tokens === undefined),
        () => "must be {text} or {tokens}, one of the two."
    ),
    v.lazy((input) =>
        !isRecord(input) || input.tokens === undefined
            ? record({ text: text(turnLimits.maxMessageChars) })
            : record({
                  tokens: list(integer(0, MAX_TOKEN_ID), { minItems: 1, maxItems: turnLimits.maxMessageChars, what: "token ids" })
              })
    )
) as v.GenericSchema<unknown, RawPrompt>;

/** `{kind: "json"}`, `{kind: "jsonSchema", schema}` or `{kind: "toolCalls", …}`: the kind decides which fields are read. */
const grammarSchema: v.GenericSchema<unknown, GrammarSpec> = v.lazy((input) =>
    isToolCallGrammar(input)
        ? toolCallGrammarSchema
        : isRecord(input) && input.kind === "jsonSchema"
          ? record({ kind: v.literal("jsonSchema"), schema: enforceableSchema })
          : record({
                kind: v.custom<"json">(
                    (value) => value === "json",
                    (issue) => `must be "json", "jsonSchema" or "toolCalls"; got ${describeValue(issue.input)}.`
                )
            })
) as v.GenericSchema<unknown, GrammarSpec>;

const samplingSchema = record({
    temperature: number(0, 2),
    maxTokens: integer(1, 1_048_576),
    topP: v.optional(number(0, 1)),
    topK: v.optional(integer(0, 1_000_000)),
    seed: v.optional(integer(0, 2 ** 32 - 1)),
    /** Empty strings stop nothing; they are dropped rather than refused. */
    stop: v.optional(
        v.pipe(
            list(text(turnLimits.maxStopChars), { maxItems: turnLimits.maxStopStrings, what: "strings" }),
            v.transform((stops) => stops.filter((stop) => stop !== ""))
        )
    ),
    logprobs: v.optional(record({ top: integer(0, 20) })),
    minP: v.optional(number(0, 1)),
    repeatPenalty: v.optional(number(0, 2)),
    presencePenalty: v.optional(number(-2, 2)),
    frequencyPenalty: v.optional(number(-2, 2)),
    repeatLastTokens: v.optional(integer(0, 4096)),
    xtc: v.optional(record({ probability: number(0, 1), threshold: number(0, 1) })),
    tokenBias: v.optional(
        list(record({ token: integer(0, MAX_TOKEN_ID), bias: number(-100, 100) }), {
            maxItems: turnLimits.maxTokenBiases,
            what: "token biases"
        })
    ),
    grammar: v.optional(grammarSchema)
});

/** A chat turn's fields; turnChecks adds the checks of the turn as a whole. */
export const chatTurnEntries = {
    requestId: idSchema(),
    workspace: turnWorkspaceSchema,
    messages: list(turnMessageSchema, { maxItems: turnLimits.maxMessages, what: "messages" }),
    prompt: v.optional(rawPromptSchema),
    sampling: samplingSchema,
    tools: v.optional(toolsSchema),
    keepKvOnDisk: v.optional(v.boolean())
};

interface Turn {
    readonly messages: readonly ChatMessage[];
    readonly prompt?: RawPrompt;
}

/**
 * `schema` (a turn's fields, maybe with more) and then the checks of the turn as a whole: a raw
 * prompt comes without messages, and otherwise the last message is one the engine can answer.
 */
export function turnChecks<S extends v.GenericSchema<unknown, Turn>>(schema: S) {
    return v.pipe(
        schema,
        v.check(
            (turn: v.InferOutput<S>) => turn.prompt === undefined || turn.messages.length === 0,
            "messages must be an empty list when a raw prompt is given."
        ),
        v.check(
            (turn: v.InferOutput<S>) => turn.prompt !== undefined || turn.messages.length > 0,
            `messages must be a list of 1 to ${turnLimits.maxMessages.toLocaleString("en-US")} messages; got a list of 0.`
        ),
        v.check(
            (turn: v.InferOutput<S>) => turn.prompt !== undefined || isAnswerable(turn.messages.at(-1)!),
            "The last message must be the user's, or an assistant's tool calls with all their results: the engine answers it."
        )
    );
}

/** Whether the engine may answer after `last`: the user's message, or an assistant's tool calls that all have their results. */
export function isAnswerable(last: ChatMessage): boolean {
    return (
        last.role === "user" ||
        (last.role === "assistant" && last.toolCalls !== undefined && last.toolCalls.every((call) => call.result !== undefined))
    );
}

/** One chat turn as the engine takes it: every field checked, unknown fields dropped. */
export const chatTurnSchema = turnChecks(record(chatTurnEntries)) as v.GenericSchema<unknown, ChatTurnRequest>;

interface Conversation {
    readonly messages: readonly { readonly role: string; readonly content: string }[];
    readonly draft?: string;
}

/**
 * `schema` (a chat's or a measure's params) and then the checks of the conversation as a whole:
 * its text within rpcLimits.maxConversationBytes, so the call fits one RPC message, and, for a
 * turn, a last message that is the user's (the one the engine answers).
 */
export function conversationChecks<S extends v.GenericSchema<unknown, Conversation>>(
    schema: S,
    options: { readonly endsWithUser: boolean }
) {
    return v.pipe(
        schema,
        v.check(
            (call: v.InferOutput<S>) => conversationBytes(call) <= rpcLimits.maxConversationBytes,
            (issue) =>
                `The conversation has ${formatBytes(conversationBytes(issue.input as Conversation))} of text (UTF-8); the limit is ${formatBytes(rpcLimits.maxConversationBytes)}. Start a new chat.`
        ),
        v.check(
            (call: v.InferOutput<S>) => !options.endsWithUser || call.messages.at(-1)?.role === "user",
            "The last message must be the user's: the engine answers it."
        )
    );
}

function conversationBytes(call: Conversation): number {
    return call.messages.reduce((sum, message) => sum + utf8ByteLength(message.content), utf8ByteLength(call.draft ?? ""));
}
