import type { IncomingMessage, ServerResponse } from "node:http";
import type { ChatMessage } from "../../../contract/engineProtocol.js";
import { namedWorkspace, unknownModel, type ApiContext } from "../ApiContext.js";
import { apiWorkspace } from "../ApiKeys.js";
import { sendJson } from "../httpResponses.js";
import { fromEngineError, OpenAiError } from "../OpenAiError.js";
import { runToolTurn } from "../runToolTurn.js";
import { StreamWriter } from "../StreamWriter.js";
import { parseResponseInput } from "./parseResponseInput.js";
import { parseResponsesRequest } from "./parseResponsesRequest.js";
import { functionCallItem, messageItem, newMessageItemId, newResponseIdentity, responseBody, type OutputItem } from "./responseBodies.js";
import { ResponsesStream } from "./ResponsesStream.js";
import type { StoredResponses } from "./StoredResponses.js";

/**
 * `POST /v1/responses`, OpenAI's Responses API: one engine turn for `instructions`, the
 * conversation `previous_response_id` continues and `input`, run as a chat completion's turn is
 * (the same admission, tools and grammar, the workspace `user` or `X-Kvault-Workspace` names in
 * the key's namespace). Answered whole or streamed as the Responses API's events; unless
 * `store: false`, the conversation with its answer is kept for a later previous_response_id in
 * the same workspace (StoredResponses). Errors are OpenAI's shape.
 */
export async function serveResponses(
    context: ApiContext,
    stored: StoredResponses,
    raw: unknown,
    request: IncomingMessage,
    response: ServerResponse,
    keyId: string | undefined
): Promise<void> {
    const body = parseResponsesRequest(raw);
    if (body.model !== context.modelId()) {
        throw unknownModel(context, body.model);
    }
    const named = namedWorkspace(request, body.user, "user");
    // stored answers are kept per key namespace and named workspace; requests naming none share the key's own
    const storeKey = `${apiWorkspace(keyId, "")}\u0000${named ?? ""}`;
    const prior = body.previousResponseId === undefined ? [] : stored.conversation(storeKey, body.previousResponseId);
    const conversation = parseResponseInput(body.input, prior);
    // instructions hold for this response only: a continued conversation does not carry the previous ones
    const messages: ChatMessage[] =
        body.instructions === undefined ? conversation : [{ role: "system", content: body.instructions }, ...conversation];
    const identity = newResponseIdentity(context.modelId());
    const writer = new StreamWriter(response, context.maxUnreadBytes);
    const stream = body.stream
        ? new ResponsesStream(response, writer, (status, output, usage) =>
              responseBody(identity, body, { status, output, ...(usage === undefined ? {} : { usage }) })
          )
        : undefined;
    try {
        const { result, calls } = await runToolTurn(
            context,
            response,
            { requestId: identity.id, keyId, named, messages, sampling: body.sampling, stop: writer.stopped },
            body.tools,
            stream === undefined ? undefined : (text) => stream.text(text)
        );
        const status = calls === undefined && result.finishReason === "length" ? "incomplete" : "completed";
        if (body.store) {
            const answer: ChatMessage =
                calls === undefined
                    ? { role: "assistant", content: result.text }
                    : {
                          role: "assistant",
                          content: "",
                          toolCalls: calls.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }))
                      };
            stored.store(storeKey, identity.id, [...conversation, answer]);
        }
        if (stream === undefined) {
            const output: OutputItem[] =
                calls === undefined
                    ? [messageItem(newMessageItemId(), result.text, status)]
                    : calls.map((call) => functionCallItem(call, "completed"));
            return sendJson(
                response,
                200,
                responseBody(identity, body, { status, output, finishReason: result.finishReason, usage: result.usage })
            );
        }
        if (calls !== undefined) {
            stream.functionCalls(calls);
        }
        stream.finish(status, result.usage);
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
