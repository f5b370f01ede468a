import crypto from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FinishReason, TokenLogprob } from "../../contract/engineProtocol.js";
import { namedWorkspace, runApiTurn, unknownModel, type ApiContext } from "./ApiContext.js";
import { chunkBody, completionBody, usageChunkBody, type CompletionIdentity } from "./chatCompletionResponses.js";
import { sendError, sendJson, writeEvent } from "./httpResponses.js";
import { fromEngineError, OpenAiError } from "./OpenAiError.js";
import { noteRequest } from "./RequestLog.js";
import { readFileParts } from "../attachments/readFileParts.js";
import { parseChatCompletion } from "./parseChatCompletion.js";
import { StreamWriter } from "./StreamWriter.js";
import { mayBeToolCall, readToolCallAnswer, templateCallGrammar, toolCallDeltas } from "./toolCallAnswers.js";

/**
 * `POST /v1/chat/completions`: one engine turn for the conversation, streamed as OpenAI's
 * server-sent events or answered whole. With tools, an answer that is a call (toolCallAnswers.ts:
 * in the template's own syntax or as JSON) is served as `tool_calls` with `finish_reason: "tool_calls"`; while streamed text may still be
 * one it is held back, then sent as call deltas or, when it is not a call, as the text it is. A
 * failure once the stream has begun is an error event and no `[DONE]`.
 */
export async function serveChatCompletion(
    context: ApiContext,
    raw: unknown,
    request: IncomingMessage,
    response: ServerResponse,
    keyId: string | undefined
): Promise<void> {
    const body = parseChatCompletion(await readFileParts(raw));
    if (body.model !== context.modelId()) {
        throw unknownModel(context, body.model);
    }
    const named = namedWorkspace(request, body.user, "user");
    const identity: CompletionIdentity = {
        id: `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`,
        created: Math.floor(Date.now() / 1000),
        model: context.modelId()
    };
    const tools = body.tools;
    // the template's own call syntax, as the engine reads it from the model's chat wrapper
    const syntax = context.engine.info.toolCallSyntax;
    // a required call is held to that syntax where there is one, to the JSON shape otherwise
    const callGrammar = tools === undefined ? undefined : templateCallGrammar(tools, syntax);
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
        void writeEvent(writer, chunkBody(identity, { role: "assistant", content: "" }, null));
    };
    // streamed text held back while it may be a call, with its logprobs
    let held = "";
    let heldLogprobs: TokenLogprob[] | undefined;
    let holding = tools !== undefined;
    const send = (text: string, logprobs: readonly TokenLogprob[] | undefined): Promise<void> => {
        openStream();
        return writeEvent(writer, chunkBody(identity, { content: text }, null, logprobs));
    };
    try {
        const result = await runApiTurn(
            context,
            response,
            {
                requestId: identity.id,
                keyId,
                named,
                messages: body.messages,
                sampling: callGrammar === undefined ? body.sampling : { ...body.sampling, grammar: callGrammar },
                ...(tools === undefined ? {} : { tools: tools.tools }),
                stop: writer.stopped
            },
            body.stream
                ? (event) => {
                      if (event.type !== "text") {
                          return;
                      }
                      if (holding) {
                          held += event.text;
                          heldLogprobs = event.logprobs === undefined ? heldLogprobs : [...(heldLogprobs ?? []), ...event.logprobs];
                          if (mayBeToolCall(held, tools!, syntax)) {
                              return;
                          }
                          holding = false;
                          return send(held, heldLogprobs);
                      }
                      return send(event.text, event.logprobs);
                  }
                : undefined
        );
        const calls = tools === undefined ? undefined : readToolCallAnswer(result.text, tools, result.finishReason, syntax);
        const finishReason: FinishReason | "tool_calls" = calls === undefined ? result.finishReason : "tool_calls";
        if (!body.stream) {
            return sendJson(response, 200, completionBody(identity, result.text, finishReason, result.usage, result.logprobs, calls));
        }
        openStream();
        if (calls !== undefined) {
            for (const delta of toolCallDeltas(calls)) {
                void writeEvent(writer, chunkBody(identity, delta, null));
            }
        } else if (holding && held !== "") {
            void send(held, heldLogprobs);
        }
        void writeEvent(writer, chunkBody(identity, {}, finishReason));
        if (body.includeUsageInStream) {
            void writeEvent(writer, usageChunkBody(identity, result.usage));
        }
        response.end("data: [DONE]\n\n");
    } catch (error) {
        const failure = error instanceof OpenAiError ? error : fromEngineError(error);
        if (!response.headersSent) {
            sendError(response, failure);
        } else if (!response.destroyed) {
            noteRequest(response, { outcome: failure.code ?? failure.type });
            // mid-stream: an error event and no [DONE]; never a completed stream
            response.end(`data: ${JSON.stringify(failure.body())}\n\n`);
        }
    }
}
