/** An error in OpenAI's shape, with the HTTP status it travels with. */
export class OpenAiError extends Error {
    constructor(
        readonly status: number,
        message: string,
        readonly type:
            | "invalid_request_error"
            | "authentication_error"
            | "not_found_error"
            | "rate_limit_error"
            | "server_error"
            | "permission_error",
        readonly code: string | null,
        readonly param: string | null = null,
        readonly retryAfterSeconds?: number
    ) {
        super(message);
    }

    body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
        return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
    }
}

export const invalidRequest = (message: string, param: string | null = null, code: string | null = null): OpenAiError =>
    new OpenAiError(400, message, "invalid_request_error", code, param);

/** Maps an engine failure (a KvaultError's stable code) to its HTTP status and OpenAI type. */
export function fromEngineError(error: unknown): OpenAiError {
    const code = typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;
    const message = error instanceof Error ? error.message : String(error);
    switch (code) {
        case "invalid_request":
            return invalidRequest(message);
        case "context_length_exceeded":
            return invalidRequest(message, "messages", "context_length_exceeded");
        case "grammar_budget_exceeded":
            return invalidRequest(message, null, code);
        case "engine_busy":
            return new OpenAiError(503, message, "server_error", "engine_busy", null, 1);
        case "engine_crashed":
        case "engine_stopped":
        case "engine_unavailable":
        case "engine_unresponsive":
            return new OpenAiError(503, message, "server_error", code, null, 2);
        case "request_cancelled":
            return new OpenAiError(499, message, "invalid_request_error", code);
        default:
            return new OpenAiError(500, `${message}${code ? "" : " (unexpected engine error)"}`, "server_error", code ?? "internal_error");
    }
}
