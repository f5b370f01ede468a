import crypto from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { namedWorkspace, runApiTurn, unknownModel, type ApiContext } from "../ApiContext.js";
import type { CompletionIdentity } from "../chatCompletionResponses.js";
import { sendJson, sendError, writeEvent } from "../httpResponses.js";
import { fromEngineError, OpenAiError } from "../OpenAiError.js";
import { noteRequest } from "../RequestLog.js";
import { legacyLogprobsBody, textCompletionBody, textUsageChunkBody } from "./completionBodies.js";
import { parseCompletion } from "./parseCompletion.js";
import { StreamWriter } from "../StreamWriter.js";

/**
 * `POST /v1/completions`: the prompt continued as it stands, without the chat template, through the
 * same admission, workspaces and engine turn as a chat completion. Streamed as OpenAI's server-sent
 * events (`text_completion` chunks, then `[DONE]`); a failure once the stream has begun is an error
 * event and no `[DONE]`. `received` is the request's JSON body, read by the caller (which first
 * offered it to the gateway: a backend's model is forwarded there).
 */
export async function serveCompletion(
    context: ApiContext,
    received: unknown,
    request: IncomingMessage,
    response: ServerResponse,
    keyId: string | undefined
): Promise<void> {
    const body = parseCompletion(received);
    if (body.model !== context.modelId()) {
        throw unknownModel(context, body.model);
    }
    const named = namedWorkspace(request, body.user, "user");
    const identity: CompletionIdentity = {
        id: `cmpl-${crypto.randomUUID().replaceAll("-", "")}`,
        created: Math.floor(Date.now() / 1000),
        model: context.modelId()
    };
    const top = body.sampling.logprobs?.top ?? 0;
    const echoed = body.echo && "text" in body.prompt ? body.prompt.text : "";
    let numCharsSent = 0;
    const writer = new StreamWriter(response, context.maxUnreadBytes);
    const openStream = (): void => {
        if (response.headersSent) {
            return;
        }
        response.writeHead(200, {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            Connection: "keep-alive"
        });
        if (echoed !== "") {
            void writeEvent(writer, textCompletionBody(identity, echoed, null, null));
        }
    };
    try {
        const result = await runApiTurn(
            context,
            response,
            { requestId: identity.id, keyId, named, prompt: body.prompt, sampling: body.sampling, stop: writer.stopped },
            body.stream
                ? (event) => {
                      if (event.type !== "text") {
                          return;
                      }
                      openStream();
                      const entries = legacyLogprobsBody(event.logprobs, top, numCharsSent);
                      numCharsSent += event.text.length;
                      return writeEvent(writer, textCompletionBody(identity, event.text, null, entries));
                  }
                : undefined
        );
        if (!body.stream) {
            return sendJson(
                response,
                200,
                textCompletionBody(
                    identity,
                    echoed + result.text,
                    result.finishReason,
                    legacyLogprobsBody(result.logprobs, top),
                    result.usage
                )
            );
        }
        openStream();
        void writeEvent(writer, textCompletionBody(identity, "", result.finishReason, null));
        if (body.includeUsageInStream) {
            void writeEvent(writer, textUsageChunkBody(identity, result.usage));
        }
        response.end("data: [DONE]\n\n");
    } catch (error) {
        const caught = error instanceof OpenAiError ? error : fromEngineError(error);
        // the engine's context check names chat's field; here the prompt is what is too long
        const failure =
            caught.code === "context_length_exceeded"
                ? new OpenAiError(caught.status, caught.message, caught.type, caught.code, "prompt")
                : caught;
        if (!response.headersSent) {
            sendError(response, failure);
        } else if (!response.destroyed) {
            noteRequest(response, { outcome: failure.code ?? failure.type });
            response.end(`data: ${JSON.stringify(failure.body())}\n\n`);
        }
    }
}
