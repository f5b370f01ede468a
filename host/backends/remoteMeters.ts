// The meters of a workspace on a remote backend, from the server itself, each with its source:
// exact token counts from its tokenizer (llama.cpp: /apply-template then /tokenize; vLLM:
// /tokenize with the messages), the window from /v1/models (max_model_len, context_length,
// llama-server's meta.n_ctx) or llama-server's /props (n_ctx, per slot), and KV usage from its
// Prometheus /metrics (llamacpp:kv_cache_usage_ratio, vllm:kv_cache_usage_perc,
// sglang:token_usage, Kvault's kvault_pages). Where a server exposes none of these, the figure
// says so, with what was asked; nothing is estimated.
import type { RemoteFigure, RemoteMeasurement } from "../../contract/backends.js";
import type { ChatMessage } from "../../contract/engineProtocol.js";
import { BackendMalformedError, BackendStatusError } from "./backendErrors.js";
import { readJson, readText, requestBackend } from "./backendHttp.js";
import type { RemoteBackend } from "./RemoteBackend.js";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/** Measures `draft` after `messages` on the workspace's backend model; the three figures are asked at once. */
export async function measureRemote(
    backend: RemoteBackend,
    model: string,
    workspace: string,
    messages: readonly ChatMessage[],
    draft: string
): Promise<RemoteMeasurement> {
    const [tokens, window, kvUsage] = await Promise.all([
        figure(() => countTokens(backend, model, messages, draft)),
        figure(() => remoteWindow(backend, model)),
        figure(() => kvCacheUsage(backend))
    ]);
    return { workspace, backend: backend.name, model, tokens, window, kvUsage };
}

/** A figure, or why there is none: a reason a backend gave (an error) is said as such. */
async function figure<T>(read: () => Promise<RemoteFigure<T>>): Promise<RemoteFigure<T>> {
    try {
        return await read();
    } catch (error) {
        return { kind: "unknown", reason: (error as Error).message };
    }
}

/** Whether a failure means "this server has no such endpoint" (try the next kind of server). */
const absent = (error: unknown): boolean => error instanceof BackendStatusError && [400, 404, 405, 422, 501].includes(error.status);

async function postJson(backend: RemoteBackend, path: string, body: unknown, what: string): Promise<unknown> {
    const response = await requestBackend(backend.config, {
        method: "POST",
        url: `${backend.config.root}${path}`,
        body,
        timeoutMs: backend.limits.quickTimeoutMs
    });
    return readJson(backend.config, response, what, backend.limits.quickTimeoutMs, backend.limits.maxBodyBytes);
}

type Counted = RemoteFigure<{ readonly usedTokens: number; readonly draftTokens: number }>;

async function countTokens(backend: RemoteBackend, model: string, messages: readonly ChatMessage[], draft: string): Promise<Counted> {
    const withDraft = [...messages, { role: "user" as const, content: draft }];
    try {
        const used = messages.length === 0 ? 0 : await llamaCppCount(backend, messages);
        const total = await llamaCppCount(backend, withDraft);
        return { kind: "known", source: "llama.cpp /apply-template + /tokenize", usedTokens: used, draftTokens: Math.max(0, total - used) };
    } catch (error) {
        if (!absent(error)) {
            throw error;
        }
    }
    try {
        const used = messages.length === 0 ? 0 : await vllmCount(backend, model, messages);
        const total = await vllmCount(backend, model, withDraft);
        return { kind: "known", source: "vLLM /tokenize (messages)", usedTokens: used, draftTokens: Math.max(0, total - used) };
    } catch (error) {
        if (!absent(error)) {
            throw error;
        }
    }
    return {
        kind: "unknown",
        reason: `Backend "${backend.name}" has no tokenizer endpoint Kvault knows (llama.cpp's /apply-template and /tokenize, vLLM's /tokenize), so its token counts are not shown rather than guessed.`
    };
}

async function llamaCppCount(backend: RemoteBackend, messages: readonly ChatMessage[]): Promise<number> {
    const templated = await postJson(backend, "/apply-template", { messages }, "templated prompt (/apply-template)");
    if (!isRecord(templated) || typeof templated.prompt !== "string") {
        throw new BackendMalformedError(`Backend "${backend.name}" answered /apply-template without a prompt string.`);
    }
    const tokenized = await postJson(
        backend,
        "/tokenize",
        { content: templated.prompt, add_special: true, parse_special: true },
        "token list (/tokenize)"
    );
    if (!isRecord(tokenized) || !Array.isArray(tokenized.tokens)) {
        throw new BackendMalformedError(`Backend "${backend.name}" answered /tokenize without a tokens list.`);
    }
    return tokenized.tokens.length;
}

async function vllmCount(backend: RemoteBackend, model: string, messages: readonly ChatMessage[]): Promise<number> {
    const counted = await postJson(backend, "/tokenize", { model, messages, add_generation_prompt: true }, "token count (/tokenize)");
    if (!isRecord(counted) || !isCount(counted.count)) {
        throw new BackendMalformedError(`Backend "${backend.name}" answered /tokenize without a whole count.`);
    }
    return counted.count;
}

async function remoteWindow(backend: RemoteBackend, model: string): Promise<RemoteFigure<{ readonly tokens: number }>> {
    const listed = (await backend.models()).find((entry) => entry.id === model);
    if (listed?.window !== undefined) {
        return { kind: "known", source: listed.window.source, tokens: listed.window.tokens };
    }
    try {
        const response = await requestBackend(backend.config, {
            method: "GET",
            url: `${backend.config.root}/props`,
            timeoutMs: backend.limits.quickTimeoutMs
        });
        const props = await readJson(backend.config, response, "server properties (/props)", backend.limits.quickTimeoutMs);
        const settings = isRecord(props) && isRecord(props.default_generation_settings) ? props.default_generation_settings : {};
        if (isCount(settings.n_ctx) && settings.n_ctx > 0) {
            const slots = isRecord(props) && isCount(props.total_slots) ? ` of ${props.total_slots} slots` : "";
            return { kind: "known", source: `llama.cpp /props n_ctx (per slot${slots})`, tokens: settings.n_ctx };
        }
    } catch (error) {
        if (!absent(error)) {
            throw error;
        }
    }
    return {
        kind: "unknown",
        reason: `Backend "${backend.name}" states no window for "${model}" (neither /v1/models max_model_len, context_length or meta.n_ctx, nor /props n_ctx).`
    };
}

/** The gauges Kvault reads, in order, with how each becomes a ratio of 0..1. */
const KV_GAUGES: readonly { readonly name: string; readonly source: string }[] = [
    { name: "llamacpp:kv_cache_usage_ratio", source: "llama.cpp /metrics llamacpp:kv_cache_usage_ratio" },
    { name: "vllm:kv_cache_usage_perc", source: "vLLM /metrics vllm:kv_cache_usage_perc" },
    { name: "vllm:gpu_cache_usage_perc", source: "vLLM /metrics vllm:gpu_cache_usage_perc" },
    { name: "sglang:token_usage", source: "SGLang /metrics sglang:token_usage" }
];

async function kvCacheUsage(backend: RemoteBackend): Promise<RemoteFigure<{ readonly ratio: number }>> {
    let text: string;
    try {
        const response = await requestBackend(backend.config, {
            method: "GET",
            url: `${backend.config.root}/metrics`,
            timeoutMs: backend.limits.quickTimeoutMs
        });
        text = await readText(backend.config, response, "metrics (/metrics)", backend.limits.quickTimeoutMs);
    } catch (error) {
        if (absent(error) || (error instanceof BackendStatusError && error.status === 503)) {
            return {
                kind: "unknown",
                reason: `Backend "${backend.name}" serves no Prometheus /metrics (${(error as BackendStatusError).status}); llama-server needs --metrics.`
            };
        }
        throw error;
    }
    const samples = readPrometheus(text);
    for (const gauge of KV_GAUGES) {
        const values = samples.get(gauge.name);
        if (values !== undefined && values.length > 0) {
            return { kind: "known", source: gauge.source, ratio: clampRatio(Math.max(...values.map(({ value }) => value))) };
        }
    }
    const pages = samples.get("kvault_pages");
    if (pages !== undefined && pages.length > 0) {
        const total = pages.reduce((sum, { value }) => sum + value, 0);
        const free = pages.find(({ labels }) => labels.includes('state="free"'))?.value ?? 0;
        return {
            kind: "known",
            source: "Kvault /metrics kvault_pages (the host page pool)",
            ratio: total === 0 ? 0 : clampRatio(1 - free / total)
        };
    }
    return {
        kind: "unknown",
        reason: `Backend "${backend.name}"'s /metrics has no KV cache gauge Kvault knows (${[...KV_GAUGES.map((gauge) => gauge.name), "kvault_pages"].join(", ")}).`
    };
}

const clampRatio = (value: number): number => Math.min(1, Math.max(0, value));

/** Prometheus text exposition: each sample's name → its label sets and values; comments and malformed lines are skipped. */
export function readPrometheus(text: string): Map<string, { readonly labels: string; readonly value: number }[]> {
    const samples = new Map<string, { labels: string; value: number }[]>();
    for (const line of text.split("\n").slice(0, 100_000)) {
        const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
        const value = match === null ? NaN : Number(match[3]);
        if (match === null || !Number.isFinite(value)) {
            continue;
        }
        const list = samples.get(match[1]!) ?? [];
        list.push({ labels: match[2] ?? "", value });
        samples.set(match[1]!, list);
    }
    return samples;
}
