// llama.cpp's server's `POST /tokenize` and `POST /detokenize`, keyed and bounded as the API is:
// `{content, add_special?, parse_special?, with_pieces?}` → `{tokens}`, and `{tokens}` → `{content}`,
// by the loaded model's own tokenizer (engine/runtime/tokenizeText.ts). `/tokenize` also takes
// vLLM's chat shape, `{messages, add_generation_prompt?}` → `{count, max_model_len, tokens}`: the
// conversation as the chat template renders it for the next answer, which is how another Kvault
// (or any client that meters vLLM) counts a workspace on this one exactly.
import type { IncomingMessage, ServerResponse } from "node:http";
import { embeddingLimits } from "../../contract/rpc/rpcSpec.js";
import { unknownModel, type ApiContext } from "./ApiContext.js";
import type { ChatMessage } from "../../contract/engineProtocol.js";
import { isRecord } from "../../contract/rpc/fieldSchemas.js";
import { isAbsent, optionalBoolean, refuseUnlessNeutral, strictObject, type Body } from "./bodyFields.js";
import { refuseUnservedMessageFields } from "./chatCompletionFields.js";
import { parseContent } from "./parseChatMessages.js";
import { sendJson } from "./httpResponses.js";
import { fromEngineError, invalidRequest, OpenAiError } from "./OpenAiError.js";
import { turnLimits } from "../../contract/limits.js";

const tokenizeFields = ["content", "add_special", "parse_special", "with_pieces", "model"];
const tokenizeChatFields = ["messages", "add_generation_prompt", "add_special_tokens", "model"];
const detokenizeFields = ["tokens", "model"];

/** `keyId`: the key's namespace (undefined: the default key), whose share of the places in flight the call takes. */
export async function serveTokenize(
    context: ApiContext,
    request: IncomingMessage,
    response: ServerResponse,
    keyId: string | undefined
): Promise<void> {
    const read = await context.readBody(request, response);
    if (isRecord(read) && "messages" in read && !("content" in read)) {
        return serveTokenizeChat(context, strictObject(read, tokenizeChatFields, "The request body (vLLM's chat shape)"), response, keyId);
    }
    const body = strictObject(read, tokenizeFields, "The request body");
    checkModel(context, body.model);
    if (typeof body.content !== "string" || body.content.length > turnLimits.maxMessageChars) {
        throw invalidRequest(
            `content is required: the text to tokenize, at most ${turnLimits.maxMessageChars.toLocaleString("en-US")} characters.`,
            "content"
        );
    }
    // llama.cpp parses special-token names in the text by default; Kvault always does
    refuseUnlessNeutral(body.parse_special, "parse_special", (value) => value === true, "Kvault always parses special-token names (true).");
    const addSpecial = optionalBoolean(body.add_special, "add_special") ?? false;
    const withPieces = optionalBoolean(body.with_pieces, "with_pieces") ?? false;
    const content = body.content;
    return sendJson(response, 200, await call(context, keyId, () => context.engine.call("tokenize", { content, addSpecial, withPieces })));
}

async function serveTokenizeChat(context: ApiContext, body: Body, response: ServerResponse, keyId: string | undefined): Promise<void> {
    checkModel(context, body.model);
    if (!Array.isArray(body.messages) || body.messages.length === 0 || body.messages.length > turnLimits.maxMessages) {
        throw invalidRequest(`messages must be a list of 1 to ${turnLimits.maxMessages} messages.`, "messages");
    }
    const messages: ChatMessage[] = body.messages.map((item: unknown, index) => {
        const role = isRecord(item) ? (item.role === "developer" ? "system" : item.role) : undefined;
        if (!isRecord(item) || (role !== "system" && role !== "user" && role !== "assistant")) {
            throw invalidRequest(
                `messages[${index}] must be a system, developer, user or assistant message; tool calls and results are not counted by /tokenize.`,
                `messages[${index}]`
            );
        }
        refuseUnservedMessageFields(item, index);
        return { role, content: parseContent(item.content, index) };
    });
    // the template opens the assistant's turn after the conversation, as a chat turn's prompt does; the template places BOS itself
    refuseUnlessNeutral(
        body.add_generation_prompt,
        "add_generation_prompt",
        (value) => value === true,
        "Kvault counts the conversation with the assistant's turn opened (true)."
    );
    refuseUnlessNeutral(
        body.add_special_tokens,
        "add_special_tokens",
        (value) => value === false,
        "the chat template places the model's special tokens itself (false)."
    );
    const { tokens } = await call(context, keyId, () => context.engine.call("tokenizeChat", { messages }));
    return sendJson(response, 200, { count: tokens.length, max_model_len: context.engine.info.window.limit, tokens });
}

export async function serveDetokenize(
    context: ApiContext,
    request: IncomingMessage,
    response: ServerResponse,
    keyId: string | undefined
): Promise<void> {
    const body = strictObject(await context.readBody(request, response), detokenizeFields, "The request body");
    checkModel(context, body.model);
    const tokens = body.tokens;
    if (
        !Array.isArray(tokens) ||
        tokens.length > embeddingLimits.maxInputTokens ||
        !tokens.every((token) => typeof token === "number" && Number.isSafeInteger(token) && token >= 0 && token < 2 ** 31)
    ) {
        throw invalidRequest(
            `tokens must be a list of at most ${embeddingLimits.maxInputTokens.toLocaleString("en-US")} token ids (whole numbers of 0 or more).`,
            "tokens"
        );
    }
    return sendJson(response, 200, await call(context, keyId, () => context.engine.call("detokenize", { tokens: tokens as number[] })));
}

function checkModel(context: ApiContext, model: unknown): void {
    if (!isAbsent(model) && model !== context.modelId()) {
        throw unknownModel(context, typeof model === "string" ? model : String(model));
    }
}

/** An engine call admitted as a turn is, against the same in-flight limit; its failures as OpenAiErrors. */
async function call<T>(context: ApiContext, keyId: string | undefined, run: () => Promise<T>): Promise<T> {
    const release = context.admit(keyId);
    try {
        return await run();
    } catch (error) {
        throw error instanceof OpenAiError ? error : fromEngineError(error);
    } finally {
        release();
    }
}
