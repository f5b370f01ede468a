// One remote, OpenAI-compatible serving engine (vLLM, SGLang, llama.cpp's llama-server, Ollama's
// /v1, Kvault itself, a cloud provider) as Kvault drives it: its models, a workspace's turn
// streamed through it, and the raw forwarding Kvault's own API does as a gateway.
import type { ChatTurnRequest, SamplingParams, TurnResult, TurnUsage } from "../../contract/engineProtocol.js";
import type { TurnListener } from "../../contract/turnEvents.js";
import { InvalidRequestError, invariant } from "../../engine/index.js";
import type { BackendConfig } from "./BackendConfig.js";
import { answerTooLong, backendLimits, type BackendLimits, BackendMalformedError, BackendNotFoundError } from "./backendErrors.js";
import { readJson, requestBackend } from "./backendHttp.js";
import {
    type ChunkReading,
    type EmbeddingsReading,
    readChunk,
    readCompletion,
    readEmbeddingList,
    readModelList,
    readTextChunk,
    type RemoteModel
} from "./openAiChunks.js";
import { readSseEvents } from "./readSseEvents.js";

/** What a turn sends when the backend says nothing of usage: its counts are unknown, so they are 0 and said to be so. */
const NO_USAGE: TurnUsage = { promptTokens: 0, cachedPromptTokens: 0, evaluatedPromptTokens: 0, completionTokens: 0 };

export class RemoteBackend {
    constructor(
        readonly config: BackendConfig,
        readonly limits: BackendLimits = backendLimits
    ) {}

    get name(): string {
        return this.config.name;
    }

    /** The models to offer: the configured one alone, else every one `/v1/models` lists (with its window where stated). */
    async models(signal?: AbortSignal): Promise<RemoteModel[]> {
        const response = await requestBackend(this.config, {
            method: "GET",
            url: `${this.config.apiBase}/models`,
            signal,
            timeoutMs: this.limits.quickTimeoutMs
        });
        const listed = readModelList(
            this.config,
            await readJson(this.config, response, "model list", this.limits.quickTimeoutMs, this.limits.maxBodyBytes)
        );
        if (this.config.model === undefined) {
            return listed;
        }
        return [listed.find((model) => model.id === this.config.model) ?? { id: this.config.model }];
    }

    /** Throws BackendNotFoundError unless `model` is one this backend offers (the configured one, when there is one). */
    checkModel(model: string): void {
        if (this.config.model !== undefined && model !== this.config.model) {
            throw new BackendNotFoundError(
                `Backend "${this.name}" offers the model "${this.config.model}" only (--backend ${this.name}=…,model=${this.config.model}), not "${model.slice(0, 200)}".`
            );
        }
    }

    /**
     * One workspace's turn on `model`, streamed: text as it arrives, the usage the backend reports.
     * Aborting `signal` aborts the request upstream (the server stops generating). A stream that
     * ends without a finish reason is BackendMalformedError: an answer cut short is never a whole one.
     * `listener` hears `started`, then each piece of text, under the turn's requestId.
     */
    async chat(
        model: string,
        request: ChatTurnRequest,
        listener?: TurnListener,
        signal?: AbortSignal,
        /** OpenAI's `user`, the workspace name the backend keeps the conversation under (Kvault's gateway sends one); none when absent. */
        user?: string
    ): Promise<TurnResult> {
        this.checkModel(model);
        if (request.prompt !== undefined) {
            throw new InvalidRequestError(
                `A raw prompt (no chat template) is not sent to backend "${this.name}": a workspace on a backend sends chat messages only.`
            );
        }
        if (request.sampling.grammar !== undefined || request.sampling.logprobs !== undefined) {
            throw new InvalidRequestError(
                `A grammar or log probabilities are not sent to backend "${this.name}" from a workspace; use Kvault's API (${this.name}/${model}) to send response_format or logprobs to it.`
            );
        }
        const body = {
            model,
            messages: request.messages.map(({ role, content }) => ({ role, content })),
            stream: true,
            stream_options: { include_usage: true },
            ...samplingFields(request.sampling),
            ...(user === undefined ? {} : { user })
        };
        return this.#streamTurn("/chat/completions", body, readChunk, { requestId: request.requestId, listener, signal });
    }

    /**
     * A raw prompt (`request.prompt`, no chat template) continued on `model`, streamed through the
     * backend's `/v1/completions` as chat streams through its chat endpoint: text as it arrives, the
     * usage it reports, BackendMalformedError for a stream without a finish reason.
     */
    async generate(
        model: string,
        request: ChatTurnRequest,
        listener?: TurnListener,
        signal?: AbortSignal,
        user?: string
    ): Promise<TurnResult> {
        this.checkModel(model);
        const prompt = request.prompt;
        invariant(prompt !== undefined, `RemoteBackend.generate needs a raw prompt; the turn has ${request.messages.length} messages`);
        if (request.sampling.grammar !== undefined || request.sampling.logprobs !== undefined) {
            throw new InvalidRequestError(
                `A grammar or log probabilities are not sent to backend "${this.name}" with a raw prompt; use Kvault's API (POST /v1/completions for ${this.name}/${model}), which sends the body as it is.`
            );
        }
        const body = {
            model,
            prompt: "text" in prompt ? prompt.text : prompt.tokens,
            stream: true,
            stream_options: { include_usage: true },
            ...samplingFields(request.sampling),
            ...(user === undefined ? {} : { user })
        };
        return this.#streamTurn("/completions", body, readTextChunk, { requestId: request.requestId, listener, signal });
    }

    /** Each input's vector from the backend's `/v1/embeddings` (as floats), in order; a count other than the inputs' is BackendMalformedError. */
    async embed(model: string, inputs: readonly (string | readonly number[])[], signal?: AbortSignal): Promise<EmbeddingsReading> {
        this.checkModel(model);
        const response = await requestBackend(this.config, {
            method: "POST",
            url: `${this.config.apiBase}/embeddings`,
            body: { model, input: inputs, encoding_format: "float" },
            signal,
            timeoutMs: this.limits.headersTimeoutMs
        });
        const read = readEmbeddingList(
            this.config,
            await readJson(this.config, response, "list of embeddings", this.limits.idleTimeoutMs, this.limits.maxBodyBytes)
        );
        if (read.embeddings.length !== inputs.length) {
            throw new BackendMalformedError(
                `Backend "${this.name}" sent ${read.embeddings.length} embedding vectors for ${inputs.length} inputs; Kvault cannot tell which is whose.`
            );
        }
        return read;
    }

    /** One streamed turn: POST `body` to `path`, each event read by `read`, the text fanned out and bounded. */
    async #streamTurn(
        path: string,
        body: Record<string, unknown>,
        read: (config: BackendConfig, data: string) => ChunkReading,
        turn: { readonly requestId: string; readonly listener: TurnListener | undefined; readonly signal: AbortSignal | undefined }
    ): Promise<TurnResult> {
        const { requestId, listener, signal } = turn;
        const response = await requestBackend(this.config, {
            method: "POST",
            url: `${this.config.apiBase}${path}`,
            body,
            signal,
            timeoutMs: this.limits.headersTimeoutMs
        });
        void listener?.({ type: "started", requestId });
        let text = "";
        let finishReason: TurnResult["finishReason"] | undefined;
        let usage: TurnUsage | undefined;
        let done = false;
        for await (const data of readSseEvents(this.config, response, {
            signal,
            idleMs: this.limits.idleTimeoutMs,
            maxEventBytes: this.limits.maxEventBytes
        })) {
            if (data === "[DONE]") {
                done = true;
                break;
            }
            const chunk = read(this.config, data);
            if (chunk.text !== "") {
                if (text.length + chunk.text.length > this.limits.maxAnswerChars) {
                    throw answerTooLong(this.name, this.limits.maxAnswerChars, "Ask for fewer tokens (the workspace's Max tokens).");
                }
                text += chunk.text;
                // the caller may not have passed the last piece on yet (its client reads slowly): the
                // backend is read no faster than the answer is taken, and the turn's signal still ends the wait
                await passedOn(listener?.({ type: "text", requestId, text: chunk.text }), signal);
            }
            finishReason = chunk.finishReason ?? finishReason;
            usage = chunk.usage ?? usage;
        }
        if (finishReason === undefined) {
            throw new BackendMalformedError(
                `Backend "${this.name}" ended its stream ${done ? "with [DONE] but" : "before [DONE] and"} without a finish reason, after ${text.length.toLocaleString("en-US")} characters: the answer may be cut short, so it is not kept as a whole one. Retry.`
            );
        }
        return { text, finishReason, usage: usage ?? NO_USAGE };
    }

    /**
     * Kvault's API as a gateway: the client's body as it came, with `model` the backend's id; the
     * response still to be read. A streamed answer's headers come at once (headersTimeoutMs); a
     * whole answer's come with the answer, after the generation, so they get the wait for a first
     * byte (idleTimeoutMs).
     */
    forward(body: Record<string, unknown>, model: string, signal: AbortSignal, path = "/chat/completions"): Promise<Response> {
        this.checkModel(model);
        return requestBackend(this.config, {
            method: "POST",
            url: `${this.config.apiBase}${path}`,
            body: { ...body, model },
            signal,
            timeoutMs: body.stream === true ? this.limits.headersTimeoutMs : this.limits.idleTimeoutMs
        });
    }

    /** A whole answer, not streamed (what the gateway's tests compare a streamed one to). */
    async complete(model: string, request: ChatTurnRequest, signal?: AbortSignal): Promise<TurnResult> {
        const response = await this.forward(
            { messages: request.messages, stream: false, ...samplingFields(request.sampling) },
            model,
            signal ?? new AbortController().signal
        );
        const read = readCompletion(
            this.config,
            await readJson(this.config, response, "chat completion", this.limits.idleTimeoutMs, this.limits.maxBodyBytes)
        );
        return { text: read.text, finishReason: read.finishReason, usage: read.usage ?? NO_USAGE };
    }
}

/**
 * A workspace's sampling as OpenAI's fields; the ones OpenAI lacks (top_k, min_p,
 * repeat_penalty) in the names vLLM, SGLang and llama-server take. Only what is set is sent.
 */
export function samplingFields(sampling: SamplingParams): Record<string, unknown> {
    return {
        temperature: sampling.temperature,
        max_tokens: sampling.maxTokens,
        ...(sampling.topP === undefined ? {} : { top_p: sampling.topP }),
        ...(sampling.topK === undefined ? {} : { top_k: sampling.topK }),
        ...(sampling.minP === undefined ? {} : { min_p: sampling.minP }),
        ...(sampling.repeatPenalty === undefined ? {} : { repeat_penalty: sampling.repeatPenalty }),
        ...(sampling.presencePenalty === undefined ? {} : { presence_penalty: sampling.presencePenalty }),
        ...(sampling.frequencyPenalty === undefined ? {} : { frequency_penalty: sampling.frequencyPenalty }),
        ...(sampling.repeatLastTokens === undefined ? {} : { repeat_last_n: sampling.repeatLastTokens }),
        ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
        ...(sampling.stop === undefined || sampling.stop.length === 0 ? {} : { stop: sampling.stop }),
        ...(sampling.tokenBias === undefined
            ? {}
            : { logit_bias: Object.fromEntries(sampling.tokenBias.map(({ token, bias }) => [String(token), bias])) })
    };
}

/** Resolves once the caller's `wait` (its listener's promise for a text event, when it gave one) has settled, or at once when `signal` aborts. */
function passedOn(wait: void | Promise<void>, signal: AbortSignal | undefined): Promise<void> | void {
    if (wait === undefined || signal === undefined) {
        return wait;
    }
    if (signal.aborted) {
        return;
    }
    return new Promise((resolve) => {
        const settle = (): void => {
            signal.removeEventListener("abort", settle);
            resolve();
        };
        signal.addEventListener("abort", settle, { once: true });
        void wait.then(settle);
    });
}
