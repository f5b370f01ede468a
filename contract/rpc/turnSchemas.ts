// What a chat turn and a draft's measure may carry (contract/engineProtocol.ts ChatTurnRequest),
// checked once, where the call enters the host. The engine answers whatever passes: its own
// checks are of what only it knows (the window, the canary's workspace names).
import * as v from "valibot";
import { fieldLimits, formatBytes, rpcLimits, turnLimits, utf8ByteLength } from "../limits.js";
import type { GrammarSpec, JsonObject } from "../engineProtocol.js";
import { readGrammarSchema } from "./readGrammarSchema.js";
import { describeValue, integer, isRecord, list, nonEmptyText, number, oneOf, record, text } from "./fieldSchemas.js";

export const idSchema = (remedy = "give each turn its own id") => nonEmptyText(fieldLimits.maxIdChars, remedy);

export const workspaceSchema = nonEmptyText(turnLimits.maxWorkspaceChars, "name the workspace");

const messageSchema = record({
    role: oneOf(["system", "user", "assistant"] as const),
    content: text(turnLimits.maxMessageChars)
});

export const messagesSchema = (minItems: number) => list(messageSchema, { minItems, maxItems: turnLimits.maxMessages, what: "messages" });

/** The largest token id a bias may name (llama.cpp's ids are int32); the engine checks it against the model's vocabulary. */
export const MAX_TOKEN_ID = 2 ** 31 - 1;

/** `{kind: "json"}` or `{kind: "jsonSchema", schema}`: the kind decides which fields are read. */
const grammarSchema: v.GenericSchema<unknown, GrammarSpec> = v.lazy((input) =>
    isRecord(input) && input.kind === "jsonSchema"
        ? record({
              kind: v.literal("jsonSchema"),
              schema: v.custom<JsonObject>(
                  (value) => grammarSchemaProblem(value) === undefined,
                  (issue) => grammarSchemaProblem(issue.input) ?? ""
              )
          })
        : record({
              kind: v.custom<"json">(
                  (value) => value === "json",
                  (issue) => `must be "json" or "jsonSchema"; got ${describeValue(issue.input)}.`
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
    tokenBias: v.optional(
        list(record({ token: integer(0, MAX_TOKEN_ID), bias: number(-100, 100) }), {
            maxItems: turnLimits.maxTokenBiases,
            what: "token biases"
        })
    ),
    grammar: v.optional(grammarSchema)
});

/** Why `value` is not a JSON schema a grammar can enforce in full (a predicate about the field), or undefined when it is one. */
export function grammarSchemaProblem(value: unknown): string | undefined {
    const problem = jsonObjectProblem(value);
    if (problem !== undefined) {
        return problem;
    }
    const read = readGrammarSchema(value as JsonObject);
    if (read.ok) {
        return undefined;
    }
    const part = read.code === "ambiguous_schema" ? "has a part too ambiguous for a grammar" : "has a part Kvault cannot enforce";
    return read.path === "" ? read.reason : `${part}: ${read.path.slice(1)} ${read.reason}`;
}

/**
 * Why `value` is not a JSON object within turnLimits' size and depth (as a predicate about the
 * field: "must be …"), or undefined when it is one. Visits at most as many values as the limit
 * has bytes (each takes at least one in JSON), so a cycle or a huge value is bounded work.
 */
export function jsonObjectProblem(value: unknown): string | undefined {
    if (!isRecord(value)) {
        return `must be a JSON object; got ${describeValue(value)}.`;
    }
    const maxBytes = turnLimits.maxGrammarSchemaBytes;
    const maxDepth = turnLimits.maxGrammarSchemaDepth;
    let numValues = 0;
    const visit = (item: unknown, depth: number, where: string): string | undefined => {
        numValues++;
        if (numValues > maxBytes) {
            return `must be at most ${formatBytes(maxBytes)} of JSON; it has more than ${numValues.toLocaleString("en-US")} values.`;
        }
        if (depth > maxDepth) {
            return `must nest at most ${maxDepth} levels deep; ${where} is deeper.`;
        }
        if (item === null || typeof item === "boolean" || typeof item === "string") {
            return undefined;
        }
        if (typeof item === "number") {
            return Number.isFinite(item) ? undefined : `must be JSON; ${where} is ${String(item)}.`;
        }
        if (Array.isArray(item)) {
            for (let index = 0; index < item.length; index++) {
                const problem = visit(item[index], depth + 1, `${where}[${index}]`);
                if (problem !== undefined) {
                    return problem;
                }
            }
            return undefined;
        }
        if (isRecord(item) && [Object.prototype, null].includes(Object.getPrototypeOf(item) as object | null)) {
            for (const [key, child] of Object.entries(item)) {
                const problem = visit(child, depth + 1, `${where}.${key}`);
                if (problem !== undefined) {
                    return problem;
                }
            }
            return undefined;
        }
        return `must be JSON; ${where} is ${describeValue(item)}.`;
    };
    const problem = visit(value, 0, "the schema");
    if (problem !== undefined) {
        return problem;
    }
    const numBytes = utf8ByteLength(JSON.stringify(value));
    return numBytes <= maxBytes ? undefined : `must be at most ${formatBytes(maxBytes)} of JSON; it has ${formatBytes(numBytes)}.`;
}

/** A chat turn's fields; the params schema adds the whole-conversation checks. */
export const chatTurnEntries = {
    requestId: idSchema(),
    workspace: workspaceSchema,
    messages: messagesSchema(1),
    sampling: samplingSchema,
    keepKvOnDisk: v.optional(v.boolean())
};

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
