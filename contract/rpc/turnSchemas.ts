// What a chat turn and a draft's measure may carry (contract/engineProtocol.ts ChatTurnRequest),
// checked once, where the call enters the host. The engine answers whatever passes: its own
// checks are of what only it knows (the window, the canary's workspace names).
import * as v from "valibot";
import { fieldLimits, formatBytes, rpcLimits, turnLimits, utf8ByteLength } from "../limits.js";
import { integer, list, nonEmptyText, number, oneOf, record, text } from "./fieldSchemas.js";

export const idSchema = (remedy = "give each turn its own id") => nonEmptyText(fieldLimits.maxIdChars, remedy);

export const workspaceSchema = nonEmptyText(turnLimits.maxWorkspaceChars, "name the workspace");

const messageSchema = record({
    role: oneOf(["system", "user", "assistant"] as const),
    content: text(turnLimits.maxMessageChars)
});

export const messagesSchema = (minItems: number) => list(messageSchema, { minItems, maxItems: turnLimits.maxMessages, what: "messages" });

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
    logprobs: v.optional(record({ top: integer(0, 20) }))
});

/** A chat turn's fields; the params schema adds the whole-conversation checks. */
export const chatTurnEntries = {
    requestId: idSchema(),
    workspace: workspaceSchema,
    messages: messagesSchema(1),
    sampling: samplingSchema
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
