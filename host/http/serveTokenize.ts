// llama.cpp's server's `POST /tokenize` and `POST /detokenize`, keyed and bounded as the API is:
// `{content, add_special?, parse_special?, with_pieces?}` → `{tokens}`, and `{tokens}` → `{content}`,
// by the loaded model's own tokenizer (engine/runtime/tokenizeText.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import { embeddingLimits } from "../../contract/rpc/rpcSpec.js";
import { unknownModel, type ApiContext } from "./ApiContext.js";
import { isAbsent, optionalBoolean, refuseUnlessNeutral, strictObject } from "./bodyFields.js";
import { sendJson } from "./httpResponses.js";
import { fromEngineError, invalidRequest, OpenAiError } from "./OpenAiError.js";
import { turnLimits } from "../../contract/limits.js";

const tokenizeFields = ["content", "add_special", "parse_special", "with_pieces", "model"];
const detokenizeFields = ["tokens", "model"];

export async function serveTokenize(context: ApiContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = strictObject(await context.readBody(request, response), tokenizeFields, "The request body");
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
    return sendJson(response, 200, await call(context, () => context.engine.call("tokenize", { content, addSpecial, withPieces })));
}

export async function serveDetokenize(context: ApiContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
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
    return sendJson(response, 200, await call(context, () => context.engine.call("detokenize", { tokens: tokens as number[] })));
}

function checkModel(context: ApiContext, model: unknown): void {
    if (!isAbsent(model) && model !== context.modelId()) {
        throw unknownModel(context, typeof model === "string" ? model : String(model));
    }
}

/** An engine call admitted as a turn is, against the same in-flight limit; its failures as OpenAiErrors. */
async function call<T>(context: ApiContext, run: () => Promise<T>): Promise<T> {
    const release = context.admit();
    try {
        return await run();
    } catch (error) {
        throw error instanceof OpenAiError ? error : fromEngineError(error);
    } finally {
        release();
    }
}
