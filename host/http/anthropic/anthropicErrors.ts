// Kvault's refusals (OpenAiError: a status, a stable code, a message with the numbers) in
// Anthropic's error shape, `{type: "error", error: {type, message}}`, so Anthropic's clients raise
// their own typed errors (BadRequestError, RateLimitError…) with Kvault's message kept whole.
import type { ServerResponse } from "node:http";
import { sendJson } from "../httpResponses.js";
import type { OpenAiError } from "../OpenAiError.js";
import { noteRequest } from "../RequestLog.js";

export type AnthropicErrorType =
    | "invalid_request_error"
    | "authentication_error"
    | "permission_error"
    | "not_found_error"
    | "request_too_large"
    | "rate_limit_error"
    | "api_error"
    | "timeout_error"
    | "overloaded_error";

/** Anthropic's status and type for a Kvault refusal: an engine that cannot serve now is "overloaded" (529), as Anthropic's is. */
export function anthropicStatus(failure: OpenAiError): { readonly status: number; readonly type: AnthropicErrorType } {
    switch (failure.status) {
        case 400:
        case 408:
        case 499: // a cancelled request, as sendError sends it
            return { status: 400, type: "invalid_request_error" };
        case 401:
            return { status: 401, type: "authentication_error" };
        case 403:
            return { status: 403, type: "permission_error" };
        case 404:
            return { status: 404, type: "not_found_error" };
        case 413:
            return { status: 413, type: "request_too_large" };
        case 429:
            return { status: 429, type: "rate_limit_error" };
        case 503:
            return { status: 529, type: "overloaded_error" };
        case 504:
            return { status: 504, type: "timeout_error" };
        default:
            return failure.status < 500 ? { status: 400, type: "invalid_request_error" } : { status: 500, type: "api_error" };
    }
}

/** The error's body in Anthropic's shape, as a response or as a stream's `error` event carries it. */
export function anthropicErrorBody(failure: OpenAiError): { type: "error"; error: { type: AnthropicErrorType; message: string } } {
    return { type: "error", error: { type: anthropicStatus(failure).type, message: failure.message } };
}

export function sendAnthropicError(response: ServerResponse, failure: OpenAiError): void {
    noteRequest(response, { outcome: failure.code ?? failure.type });
    if (failure.retryAfterSeconds !== undefined) {
        response.setHeader("Retry-After", String(failure.retryAfterSeconds));
    }
    sendJson(response, anthropicStatus(failure).status, anthropicErrorBody(failure));
}
