// One streamed chat completion through the OpenAI-style endpoint both servers serve, timed as a
// user feels it: time to the first token, the gaps between tokens, and the whole answer.
import type { PeerServer } from "./PeerServer.js";
import { wholeCharacterBias } from "./wholeCharacters.js";

const LOGIT_BIAS = wholeCharacterBias();

export interface ChatTiming {
    /** From sending the request to the first content token, ms. */
    readonly ttftMs: number;
    /** Between consecutive content chunks, ms. */
    readonly gapsMs: readonly number[];
    /** When each content chunk arrived, ms after the request was sent (performance.now() based). */
    readonly arrivalsMs: readonly number[];
    readonly sentAt: number;
    readonly totalMs: number;
    /** The server's count when it reports usage, else the content chunks. */
    readonly numCompletionTokens: number;
    /** Prompt tokens the server evaluated for this request (llama-server's timings.prompt_n, else prompt_tokens − cached_tokens); undefined when it did not say. */
    readonly numPrefilledTokens: number | undefined;
    readonly text: string;
}

export interface ChatMessage {
    readonly role: "system" | "user" | "assistant";
    readonly content: string;
}

/** Longest one answer may take before the benchmark gives up on it. */
const ANSWER_TIMEOUT_MS = 600_000;

export async function streamChat(
    server: PeerServer,
    messages: readonly ChatMessage[],
    maxTokens: number,
    extraFields: Record<string, unknown> = {},
    /** Told how many content chunks have arrived, as each arrives. */
    onToken?: (numTokens: number) => void,
    extraHeaders: Record<string, string> = {}
): Promise<ChatTiming> {
    const sentAt = performance.now();
    const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
        method: "POST",
        headers: {
            "content-type": "application/json",
            ...(server.apiKey === undefined ? {} : { authorization: `Bearer ${server.apiKey}` }),
            ...extraHeaders
        },
        body: JSON.stringify({
            model: server.modelId,
            messages,
            max_tokens: maxTokens,
            temperature: 0,
            stream: true,
            stream_options: { include_usage: true },
            logit_bias: LOGIT_BIAS,
            ...extraFields
        }),
        signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS)
    });
    if (!response.ok || response.body === null) {
        throw new Error(`${server.name} answered ${response.status}: ${(await response.text()).slice(0, 500)}`);
    }
    const arrivals: number[] = [];
    let text = "";
    let usageTokens: number | undefined;
    let numPrefilled: number | undefined;
    let buffered = "";
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf("\n")) >= 0) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (!line.startsWith("data:")) {
                continue;
            }
            const data = line.slice(5).trim();
            if (data === "[DONE]") {
                continue;
            }
            const event = JSON.parse(data) as {
                choices?: { delta?: { content?: string | null } }[];
                usage?: {
                    completion_tokens?: number;
                    prompt_tokens?: number;
                    prompt_tokens_details?: { cached_tokens?: number };
                } | null;
                timings?: { prompt_n?: number };
                error?: { message?: string };
            };
            if (event.error !== undefined) {
                throw new Error(`${server.name} failed mid-stream: ${event.error.message ?? JSON.stringify(event.error)}`);
            }
            const content = event.choices?.[0]?.delta?.content;
            if (typeof content === "string" && content !== "") {
                arrivals.push(performance.now() - sentAt);
                text += content;
                onToken?.(arrivals.length);
            }
            if (typeof event.usage?.completion_tokens === "number") {
                usageTokens = event.usage.completion_tokens;
            }
            if (typeof event.timings?.prompt_n === "number") {
                numPrefilled = event.timings.prompt_n;
            } else if (typeof event.usage?.prompt_tokens === "number" && numPrefilled === undefined) {
                numPrefilled = event.usage.prompt_tokens - (event.usage.prompt_tokens_details?.cached_tokens ?? 0);
            }
        }
    }
    const totalMs = performance.now() - sentAt;
    if (arrivals.length === 0) {
        throw new Error(`${server.name} streamed no content for a ${maxTokens}-token answer.`);
    }
    return {
        ttftMs: arrivals[0]!,
        gapsMs: arrivals.slice(1).map((at, index) => at - arrivals[index]!),
        arrivalsMs: arrivals,
        sentAt,
        totalMs,
        numCompletionTokens: usageTokens ?? arrivals.length,
        numPrefilledTokens: numPrefilled,
        text
    };
}
