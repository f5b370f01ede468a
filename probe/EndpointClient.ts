// The probe's side of an OpenAI-compatible endpoint: Node's fetch, each request under a time
// limit (headers and body), each answer read through one bounded reader (readAnswerText) into
// plain values. Failures to reach the server, and answers past the byte cap, are values too
// (with the reason), so a probe can judge them; nothing here throws on a bad answer.
import { MAX_ANSWER_BYTES, ProbeAnswerTooLargeError, readAnswerText } from "./readAnswerText.js";

/** Characters of an answer or error kept in the report. */
export const EXCERPT_CHARS = 240;

export type EndpointKind = "chat" | "completions";

/** One request and what came back. */
export interface Exchange {
    /** HTTP status; 0 when no answer came, or none that could be read (unreachable, timed out, aborted before the headers, over the byte cap). */
    readonly status: number;
    /** The generated text, whole (judged in full; the report keeps an excerpt). */
    readonly text: string;
    /** The server's own counts, where it gave them. */
    readonly promptTokens?: number;
    readonly completionTokens?: number;
    /** The chosen tokens with their log-probabilities, in order, where they were asked for and the server gave them. */
    readonly scoredTokens?: readonly ScoredToken[];
    /** An error's `code` (or `type`) and message, where the body had one. */
    readonly errorCode?: string;
    readonly errorMessage?: string;
    /** Why no answer came, for status 0. */
    readonly failure?: string;
    readonly elapsedMs: number;
}

/** One generated token as the server scored it. */
export interface ScoredToken {
    readonly token: string;
    readonly logprob: number;
    /** The best other candidate's log-probability, where the server listed alternatives. */
    readonly runnerUp?: number;
}

export interface CompletionRequest {
    readonly key: string | undefined;
    readonly user: string;
    readonly prompt: string;
    readonly maxTokens: number;
    /** Ask for the chosen tokens' log-probabilities and the best alternative (OpenAI's `logprobs`, `top_logprobs`). */
    readonly logprobs?: boolean;
}

export interface EndpointOptions {
    readonly baseUrl: string;
    readonly model: string;
    readonly kind: EndpointKind;
    /** Per request, headers and body together, in milliseconds. */
    readonly timeoutMs: number;
    /** Bytes of one answer read at most (MAX_ANSWER_BYTES when absent). */
    readonly maxAnswerBytes?: number;
}

/** "http://h:p", "http://h:p/" and "http://h:p/v1" all name the same server root. */
export function serverRoot(url: string): string {
    return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}

export class EndpointClient {
    readonly root: string;

    constructor(readonly options: EndpointOptions) {
        this.root = serverRoot(options.baseUrl);
    }

    /**
     * A GET of `path` (JSON expected): its status and body; status 0 with why when no answer came,
     * and its status with why (no body) when the answer could not be read whole.
     */
    async getJson(path: string, key: string | undefined): Promise<{ status: number; body: unknown; failure?: string }> {
        let status = 0;
        try {
            const response = await fetch(`${this.root}${path}`, {
                headers: headersFor(key),
                signal: AbortSignal.timeout(this.options.timeoutMs)
            });
            status = response.status;
            return { status, body: parseJson(await this.#read(response)) };
        } catch (error) {
            return { status, body: undefined, failure: describeFetchError(error, this.options.timeoutMs) };
        }
    }

    /** One greedy, non-streamed request. */
    async complete(request: CompletionRequest): Promise<Exchange> {
        const started = performance.now();
        try {
            const response = await fetch(this.#endpointUrl(), {
                method: "POST",
                headers: { ...headersFor(request.key), "content-type": "application/json" },
                body: JSON.stringify(this.#body(request, false)),
                signal: AbortSignal.timeout(this.options.timeoutMs)
            });
            const body = parseJson(await this.#read(response));
            return { ...readAnswer(response.status, body, this.options.kind), elapsedMs: performance.now() - started };
        } catch (error) {
            return {
                status: 0,
                text: "",
                failure: describeFetchError(error, this.options.timeoutMs),
                elapsedMs: performance.now() - started
            };
        }
    }

    /**
     * A streamed request cut off while the server is still busy with its prompt: aborted as soon
     * as the response's headers arrive, or after `abortAfterMs` if they have not. Resolves with the
     * status seen (0 when aborted before the headers) and whatever text had arrived.
     */
    async streamAndAbort(request: CompletionRequest, abortAfterMs: number): Promise<Exchange & { readonly aborted: boolean }> {
        const started = performance.now();
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), abortAfterMs);
        try {
            const response = await fetch(this.#endpointUrl(), {
                method: "POST",
                headers: { ...headersFor(request.key), "content-type": "application/json" },
                body: JSON.stringify(this.#body(request, true)),
                signal: AbortSignal.any([controller.signal, AbortSignal.timeout(this.options.timeoutMs)])
            });
            if (!response.ok) {
                const body = parseJson(await this.#read(response));
                return { ...readAnswer(response.status, body, this.options.kind), aborted: false, elapsedMs: performance.now() - started };
            }
            controller.abort();
            await response.body?.cancel().catch(() => undefined);
            return { status: response.status, text: "", aborted: true, elapsedMs: performance.now() - started };
        } catch (error) {
            if (controller.signal.aborted) {
                return { status: 0, text: "", aborted: true, elapsedMs: performance.now() - started };
            }
            return {
                status: 0,
                text: "",
                aborted: false,
                failure: describeFetchError(error, this.options.timeoutMs),
                elapsedMs: performance.now() - started
            };
        } finally {
            clearTimeout(timer);
        }
    }

    /** The answer's text through the one bounded reader; the request's signal bounds it in time. */
    #read(response: Response): Promise<string> {
        return readAnswerText(response, response.url, this.options.maxAnswerBytes ?? MAX_ANSWER_BYTES);
    }

    #endpointUrl(): string {
        return `${this.root}/v1/${this.options.kind === "chat" ? "chat/completions" : "completions"}`;
    }

    #body(request: CompletionRequest, stream: boolean): Record<string, unknown> {
        const common = { model: this.options.model, max_tokens: request.maxTokens, temperature: 0, user: request.user, stream };
        // Chat takes a boolean and how many alternatives to list; the legacy completions endpoint, the count alone.
        const logprobs =
            request.logprobs !== true ? {} : this.options.kind === "chat" ? { logprobs: true, top_logprobs: 2 } : { logprobs: 2 };
        return this.options.kind === "chat"
            ? { ...common, ...logprobs, messages: [{ role: "user", content: request.prompt }] }
            : { ...common, ...logprobs, prompt: request.prompt };
    }
}

function headersFor(key: string | undefined): Record<string, string> {
    return key === undefined ? {} : { authorization: `Bearer ${key}` };
}

function parseJson(text: string): unknown {
    try {
        return JSON.parse(text) as unknown;
    } catch {
        return text;
    }
}

/** The text, counts and error of an answer's body, whatever shape it has. */
export function readAnswer(status: number, body: unknown, kind: EndpointKind): Omit<Exchange, "elapsedMs"> {
    const record = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
    const choice = Array.isArray(record.choices) ? (record.choices[0] as Record<string, unknown> | undefined) : undefined;
    const message = choice?.message as Record<string, unknown> | undefined;
    const content = kind === "chat" ? message?.content : choice?.text;
    // Reasoning servers put part of the answer beside the content: it is judged too.
    const reasoning = message?.reasoning_content ?? message?.reasoning;
    const text = [content, reasoning].filter((part): part is string => typeof part === "string").join("\n");
    const usage = record.usage as Record<string, unknown> | undefined;
    const scoredTokens = scoredTokensOf(choice?.logprobs, kind);
    const error = (typeof record.error === "object" && record.error !== null ? record.error : undefined) as
        | Record<string, unknown>
        | undefined;
    const errorText = typeof record.error === "string" ? record.error : typeof body === "string" && status >= 400 ? body : undefined;
    return {
        status,
        text,
        ...(typeof usage?.prompt_tokens === "number" ? { promptTokens: usage.prompt_tokens } : {}),
        ...(typeof usage?.completion_tokens === "number" ? { completionTokens: usage.completion_tokens } : {}),
        ...(scoredTokens !== undefined ? { scoredTokens } : {}),
        ...(error !== undefined || errorText !== undefined
            ? {
                  errorCode: String(error?.code ?? error?.type ?? ""),
                  errorMessage: String(error?.message ?? errorText ?? "").slice(0, EXCERPT_CHARS * 2)
              }
            : {})
    };
}

/**
 * The chosen tokens of a choice's `logprobs`: chat's `content[]` ({ token, logprob,
 * top_logprobs[] }), completions' `tokens[]`, `token_logprobs[]` and `top_logprobs[]` ({ token:
 * logprob }). Undefined unless every token has a string and a finite log-probability.
 */
function scoredTokensOf(logprobs: unknown, kind: EndpointKind): readonly ScoredToken[] | undefined {
    const record = typeof logprobs === "object" && logprobs !== null ? (logprobs as Record<string, unknown>) : undefined;
    const entries: { token: unknown; logprob: unknown; alternatives: [unknown, unknown][] }[] = [];
    if (kind === "chat" && Array.isArray(record?.content)) {
        for (const entry of record.content as (Record<string, unknown> | null)[]) {
            const top = Array.isArray(entry?.top_logprobs) ? (entry.top_logprobs as (Record<string, unknown> | null)[]) : [];
            entries.push({ token: entry?.token, logprob: entry?.logprob, alternatives: top.map((alt) => [alt?.token, alt?.logprob]) });
        }
    } else if (kind === "completions" && Array.isArray(record?.tokens) && Array.isArray(record?.token_logprobs)) {
        const top = Array.isArray(record.top_logprobs) ? (record.top_logprobs as unknown[]) : [];
        record.tokens.forEach((token: unknown, index: number) => {
            const alternatives = top[index];
            entries.push({
                token,
                logprob: (record.token_logprobs as unknown[])[index],
                alternatives: typeof alternatives === "object" && alternatives !== null ? Object.entries(alternatives) : []
            });
        });
    }
    const scored: ScoredToken[] = [];
    for (const { token, logprob, alternatives } of entries) {
        if (typeof token !== "string" || typeof logprob !== "number" || !Number.isFinite(logprob)) {
            return undefined;
        }
        const others = alternatives
            .filter(([alternative, value]) => alternative !== token && typeof value === "number" && Number.isFinite(value))
            .map(([, value]) => value as number);
        scored.push(others.length > 0 ? { token, logprob, runnerUp: Math.max(...others) } : { token, logprob });
    }
    return scored.length > 0 ? scored : undefined;
}

function describeFetchError(error: unknown, timeoutMs: number): string {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (error instanceof ProbeAnswerTooLargeError) {
        return error.message;
    }
    if ((error as Error).name === "TimeoutError") {
        return `no whole answer within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}`;
    }
    return cause?.code ?? cause?.message ?? (error as Error).message;
}
