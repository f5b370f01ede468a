import type { IncomingMessage, ServerResponse } from "node:http";
import { namedWorkspace, unknownModel, type ApiContext } from "../ApiContext.js";
import { sendJson } from "../httpResponses.js";
import { fromEngineError, OpenAiError } from "../OpenAiError.js";
import { runToolTurn } from "../runToolTurn.js";
import { StreamWriter } from "../StreamWriter.js";
import { messageBody, newMessageIdentity, stopReasonOf, toolUseOf, usageOf, type AnthropicBlock } from "./anthropicBodies.js";
import { sendAnthropicError } from "./anthropicErrors.js";
import { AnthropicStream } from "./AnthropicStream.js";
import { parseAnthropicRequest, type AnthropicRequest } from "./parseAnthropicRequest.js";

/** The paths of Anthropic's Messages API that Kvault serves. */
export const anthropicPaths = new Set(["/v1/messages", "/v1/messages/count_tokens"]);

/**
 * Anthropic's Messages API on Kvault's port, for the clients that speak it (Anthropic's SDKs,
 * Claude Code): `POST /v1/messages` and `POST /v1/messages/count_tokens`, behind the same keys as
 * the rest of `/v1/` (`x-api-key` or Bearer; `anthropic-version` is accepted, whatever it says).
 * A turn runs as a chat completion's does: the same admission, tools and grammar, the workspace
 * that `metadata.user_id` (or `X-Kvault-Workspace`) names in the key's namespace. Every refusal,
 * the key's included, is in Anthropic's error shape with Kvault's message.
 */
export async function serveAnthropic(
    context: ApiContext,
    request: IncomingMessage,
    response: ServerResponse,
    route: string,
    /** Checks the request's key (a 401 otherwise) and says whose it is; called inside, so a refusal is in Anthropic's shape too. */
    identify: () => { readonly keyId: string | undefined }
): Promise<void> {
    try {
        const { keyId } = identify();
        if (route === "POST /v1/messages/count_tokens") {
            return await countTokens(context, parseAnthropicRequest(await context.readBody(request, response), true), response, keyId);
        }
        if (route !== "POST /v1/messages") {
            throw new OpenAiError(404, `Unknown endpoint ${route}.`, "not_found_error", "unknown_url");
        }
        const body = parseAnthropicRequest(await context.readBody(request, response));
        return await answer(context, body, request, response, keyId);
    } catch (error) {
        const failure = error instanceof OpenAiError ? error : fromEngineError(error);
        if (!response.headersSent) {
            sendAnthropicError(response, failure);
        } else {
            response.end();
        }
    }
}

async function answer(
    context: ApiContext,
    body: AnthropicRequest,
    request: IncomingMessage,
    response: ServerResponse,
    keyId: string | undefined
): Promise<void> {
    if (body.model !== context.modelId()) {
        throw unknownModel(context, body.model);
    }
    const identity = newMessageIdentity(context.modelId());
    const writer = new StreamWriter(response, context.maxUnreadBytes);
    const stream = body.stream ? new AnthropicStream(response, writer, identity) : undefined;
    const turn = {
        requestId: identity.id,
        keyId,
        named: namedWorkspace(request, body.userId, "metadata.user_id"),
        messages: body.messages,
        sampling: body.sampling,
        stop: writer.stopped
    };
    try {
        const { result, calls } = await runToolTurn(
            context,
            response,
            turn,
            body.tools,
            stream === undefined ? undefined : (text) => stream.text(text)
        );
        const toolUses = (calls ?? []).map(toolUseOf);
        const stopReason = stopReasonOf(result.finishReason, calls !== undefined);
        if (stream === undefined) {
            const content: AnthropicBlock[] = calls === undefined ? [{ type: "text", text: result.text }] : toolUses;
            return sendJson(response, 200, messageBody(identity, content, stopReason, usageOf(result.usage)));
        }
        stream.toolUses(toolUses);
        stream.finish(stopReason, usageOf(result.usage));
    } catch (error) {
        const failure = error instanceof OpenAiError ? error : fromEngineError(error);
        if (stream === undefined || !response.headersSent) {
            throw failure;
        }
        if (!response.destroyed) {
            stream.fail(failure);
        }
    }
}

/**
 * The prompt's tokens as the chat template renders the conversation (the engine's tokenizeChat);
 * tools are counted as their JSON text, since the template's tool section is rendered only in a turn.
 */
async function countTokens(
    context: ApiContext,
    body: AnthropicRequest,
    response: ServerResponse,
    keyId: string | undefined
): Promise<void> {
    if (body.model !== context.modelId()) {
        throw unknownModel(context, body.model);
    }
    const release = context.admit(keyId);
    try {
        const { tokens } = await context.engine.call("tokenizeChat", { messages: body.messages });
        const tools = body.tools?.tools;
        const toolTokens =
            tools === undefined
                ? 0
                : (await context.engine.call("tokenize", { content: JSON.stringify(tools), addSpecial: false, withPieces: false })).tokens
                      .length;
        sendJson(response, 200, { input_tokens: tokens.length + toolTokens });
    } catch (error) {
        throw error instanceof OpenAiError ? error : fromEngineError(error);
    } finally {
        release();
    }
}
