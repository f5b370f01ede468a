import type {
    ChatMessage,
    ChatTurnRequest,
    DraftMeasurement,
    EmbeddingResult,
    EngineInfo,
    SamplingParams,
    TokenLogprob,
    TokenizeResult,
    TurnResult,
    TurnUsage
} from "../../contract/engineProtocol.js";
import type { TurnListener } from "../../contract/turnEvents.js";
import type { DiskKvRestore } from "../workspace/DiskKvStore.js";

export type { TurnResult } from "../../contract/engineProtocol.js";
export type { TurnListener } from "../../contract/turnEvents.js";
import type { EngineSnapshot } from "../../contract/EngineSnapshot.js";
import type { AuditSummary, CanaryReport, DrillDescription, DrillReport, ReplayableTurn, ReplaySummary } from "../../contract/isolation.js";
import { PeriodicAudit } from "../audit/PeriodicAudit.js";
import { runSlicedAudit } from "../audit/runSlicedAudit.js";
import { isCanaryWorkspace } from "../canary/canaryMarkers.js";
import { runCanaryProbe } from "../canary/runCanaryProbe.js";
import { InvalidRequestError } from "../request/requestErrors.js";
import { drillCatalog } from "../drills/drillCatalog.js";
import { runFaultDrill } from "../drills/runFaultDrill.js";
import { ReplayUnavailableError } from "../audit/ReplayLog.js";
import { requestId as toRequestId, workspaceId } from "../core/ids.js";
import type { EngineConfigInput } from "../EngineConfig.js";
import type { EnginePolicies } from "../EnginePolicies.js";
import { KvEngine, type KvEngineHooks } from "../KvEngine.js";
import { ChatRenderer } from "../runtime/ChatRenderer.js";
import { LlamaEmbedder } from "../runtime/LlamaEmbedder.js";
import type { LlamaRuntime } from "../runtime/LlamaRuntime.js";
import { rawPromptTokens } from "../runtime/rawPromptTokens.js";
import { readToolCallSyntax } from "../runtime/toolCallSyntax.js";
import { detokenizeTokens, tokenizeText } from "../runtime/tokenizeText.js";
import { DEFAULT_PENALTY_LAST_TOKENS, type SamplingOptions, type TokenProbabilities } from "../runtime/SequenceSlot.js";
import { TextStreamer } from "./TextStreamer.js";
import { snapshotEngine, snapshotRoles, type KvHolders } from "./snapshotEngine.js";
import { snapshotSequences } from "./snapshotSequences.js";
import { ThroughputMeter } from "./ThroughputMeter.js";
import { WorkspaceThroughput } from "./WorkspaceThroughput.js";
import { readVramState } from "../runtime/readVramState.js";
import { readWith } from "../../contract/rpc/fieldSchemas.js";
import { chatTurnSchema } from "../../contract/rpc/turnSchemas.js";
import type { MemoryEventsPage } from "../../contract/memoryEvents.js";

/** The least time between two passing audits on the memory timeline (failing ones are all recorded). */
const AUDIT_EVENT_EVERY_MS = 60_000;

/** A conversation as the engine last answered it: the messages with its answer, and the exact tokens. */
interface Transcript {
    readonly messages: readonly ChatMessage[];
    readonly tokens: readonly number[];
}

/**
 * What hosts call: chat turns per workspace over the engine, rendered with the model's chat
 * template; a draft's pre-flight measure; snapshots for the UI. The same class runs inside the
 * engine process (engine/process/) and, in tests, in process.
 */
export class EngineService {
    readonly #transcripts = new Map<string, Transcript>();
    readonly #throughput = new ThroughputMeter();
    /** The same tokens, by workspace (the status bar's tokens/s, rpcSpec resourceUse). */
    readonly #workspaceThroughput = new WorkspaceThroughput();
    readonly #startedAt = performance.now();
    /** Counts every audit; runs them on a timer only when started with `auditIntervalMs`. */
    readonly #audits: PeriodicAudit;
    #auditing: Promise<AuditSummary> | undefined;
    #auditsSinceEvent = 0;
    #lastAuditEventAt = 0;
    /** The model's embedding context, opened by the first embed; as wide as the window, at most the model's training context. */
    readonly #embedder: LlamaEmbedder;

    private constructor(
        readonly engine: KvEngine,
        readonly renderer: ChatRenderer,
        auditIntervalMs: number | undefined,
        log: (line: string) => void
    ) {
        this.#audits = new PeriodicAudit(() => this.audit(), auditIntervalMs, log);
        const embeddingTokens = Math.min(engine.window.limit, engine.model.trainContextSize);
        this.#embedder = new LlamaEmbedder(engine.model, embeddingTokens, engine.config.threads, engine.computeTurns);
        if (auditIntervalMs !== undefined) {
            this.#audits.start();
        }
    }

    /**
     * `auditIntervalMs`: audit I1–I7 on a timer (the engine process does, every second) and put the
     * results in every snapshot; without it, audits run only when asked. `policies`: for tests of
     * the guards alone (the leak probe's test serves an engine with the 2026 incident's guards
     * off); the engine process never passes any (EngineStartOptions).
     */
    static async start(
        config: EngineConfigInput,
        options: {
            runtime?: LlamaRuntime;
            hooks?: KvEngineHooks;
            auditIntervalMs?: number;
            log?: (line: string) => void;
            policies?: Partial<EnginePolicies>;
        } = {}
    ): Promise<EngineService> {
        const engine = await KvEngine.start(config, options);
        try {
            return new EngineService(engine, new ChatRenderer(engine.model), options.auditIntervalMs, options.log ?? (() => undefined));
        } catch (error) {
            await engine.dispose();
            throw error;
        }
    }

    info(): EngineInfo {
        const { engine } = this;
        const toolCallSyntax = readToolCallSyntax(this.renderer.wrapper, engine.model);
        return {
            modelPath: engine.config.modelPath,
            modelName: engine.modelName,
            backend: engine.backend,
            compute: engine.compute,
            mode: engine.mode,
            window: {
                configured: engine.window.configured,
                limit: engine.window.limit,
                boundBy: engine.window.boundBy,
                clamped: engine.window.clamped
            },
            capacities: engine.window.capacities,
            numDecodeSequences: engine.decode.numSequences,
            pageTokens: engine.pool.config.pageTokens,
            numPages: engine.pool.config.numPages,
            pageBytes: engine.pool.config.pageBytes,
            embeddingDimensions: this.#embedder.dimensions,
            kvCacheType: engine.config.kvCacheType,
            ...(toolCallSyntax === undefined ? {} : { toolCallSyntax })
        };
    }

    /**
     * One chat turn. Resolves with the whole answer when it was served in full; every other end
     * rejects with a typed error, and the answer is not kept. `listener` hears the turn's events
     * under its requestId; a promise it gives back is not waited for (the engine cannot pause).
     */
    async chat(untrusted: unknown, listener?: TurnListener, signal?: AbortSignal): Promise<TurnResult> {
        // The turn's one schema again, as the host ran it: a turn that crossed a process boundary is not trusted (poison payload).
        const read = readWith(chatTurnSchema, untrusted);
        if (!read.ok) {
            throw new InvalidRequestError(read.reason);
        }
        const request = read.value;
        const { requestId, workspace, messages, sampling, prompt } = request;
        const promptTokens =
            prompt === undefined
                ? await this.#promptTokens(workspace, messages, request.tools)
                : await rawPromptTokens(this.engine.model, prompt);
        if (promptTokens.length === 0) {
            throw new InvalidRequestError("The prompt is empty and this model has no BOS token to start from; give the prompt some text.");
        }
        this.#transcripts.delete(workspace);

        const streamer = new TextStreamer((tokens, previous) => this.renderer.detokenize(tokens, previous), sampling.stop ?? []);
        const logprobs: TokenLogprob[] | undefined = sampling.logprobs === undefined ? undefined : [];
        let numLogprobsSent = 0;
        const sendText = (text: string): void => {
            if (logprobs === undefined) {
                void listener?.({ type: "text", requestId, text });
                return;
            }
            const chunk = logprobs.slice(numLogprobsSent);
            numLogprobsSent = logprobs.length;
            void listener?.({ type: "text", requestId, text, logprobs: chunk });
        };
        const result = await this.engine.generate({
            workspace: workspaceId(workspace),
            requestId: toRequestId(requestId),
            promptTokens,
            maxTokens: sampling.maxTokens,
            sampling: samplingOptions(sampling),
            logprobs: sampling.logprobs,
            signal,
            listener,
            keepKvOnDisk: request.keepKvOnDisk === true,
            onToken: (token, probabilities) => {
                this.#throughput.add(1);
                this.#workspaceThroughput.add(workspace, 1);
                if (logprobs !== undefined && probabilities !== undefined) {
                    logprobs.push(this.#toLogprob(probabilities));
                }
                const text = streamer.push(token);
                if (text !== "") {
                    sendText(text);
                }
                return streamer.stopped ? "stop" : undefined;
            }
        });
        const rest = streamer.rest();
        if (rest !== "") {
            sendText(rest);
        }
        const text = streamer.finish();
        if (!streamer.stopped && prompt === undefined) {
            // a raw prompt keeps no transcript: its KV is reused by prefix all the same.
            // A stop string cut the answer: its tokens are not the conversation's; render in full next turn
            this.#transcripts.set(workspace, {
                messages: [...messages, { role: "assistant", content: text }],
                tokens: [...promptTokens, ...result.tokens]
            });
        }
        return {
            text,
            finishReason: streamer.stopped ? "stop" : result.finishReason,
            usage: {
                promptTokens: promptTokens.length,
                cachedPromptTokens: result.numReusedTokens,
                evaluatedPromptTokens: result.numEvaluatedTokens,
                completionTokens: result.tokens.length,
                ...diskKvUsage(result.diskKv),
                ...(this.engine.config.speculation === undefined
                    ? {}
                    : { acceptedDraftTokens: result.drafts.validated, rejectedDraftTokens: result.drafts.refuted })
            },
            ...(logprobs === undefined ? {} : { logprobs })
        };
    }

    #toLogprob(probabilities: TokenProbabilities): TokenLogprob {
        const chosen = this.renderer.describeToken(probabilities.token);
        return {
            token: chosen.text,
            logprob: probabilities.logprob,
            bytes: chosen.bytes,
            topLogprobs: probabilities.top.map((candidate) => {
                const described = this.renderer.describeToken(candidate.token);
                return { token: described.text, logprob: candidate.logprob, bytes: described.bytes };
            })
        };
    }

    /**
     * The conversation's tokens. After an answer the engine generated itself, the answer's own
     * sampled tokens are kept and only what follows is rendered, so nothing the workspace holds is
     * evaluated again; otherwise the whole conversation is rendered.
     */
    async #promptTokens(workspace: string, messages: readonly ChatMessage[], tools: ChatTurnRequest["tools"]): Promise<number[]> {
        const transcript = this.#transcripts.get(workspace);
        // With tools the template's tool section and calls shape the whole text: rendered in full (prefix reuse still applies)
        const withTools = tools !== undefined || messages.some((message) => message.toolCalls !== undefined);
        if (
            !withTools &&
            transcript !== undefined &&
            messages.length > transcript.messages.length &&
            transcript.messages.every(
                (message, index) => message.role === messages[index]!.role && message.content === messages[index]!.content
            )
        ) {
            const continuation = await this.renderer.renderContinuation(messages, transcript.messages.length - 1);
            if (continuation !== undefined) {
                return [...transcript.tokens, ...continuation];
            }
        }
        return this.renderer.tokenizeConversation(messages, tools);
    }

    /** Embeddings of each input, in order (rpcSpec `embed`); an input that does not fit the embedding context is refused with the numbers. */
    embed(inputs: readonly (string | readonly number[])[]): Promise<EmbeddingResult> {
        return this.#embedder.embed(inputs);
    }

    /** The model's tokens for `content` (rpcSpec `tokenize`, the API's `/tokenize`). */
    tokenize(content: string, options: { readonly addSpecial: boolean; readonly withPieces: boolean }): TokenizeResult {
        return tokenizeText(this.engine.model, content, options, (token) => this.renderer.describeToken(token));
    }

    /** A conversation's tokens as the chat template renders it for the next answer (rpcSpec `tokenizeChat`, the API's `/tokenize` with messages). */
    tokenizeChat(messages: readonly ChatMessage[]): Promise<number[]> {
        return this.renderer.tokenizeConversation(messages);
    }

    /** The text of `tokens` (rpcSpec `detokenize`, the API's `/detokenize`). */
    detokenize(tokens: readonly number[]): string {
        return detokenizeTokens(this.engine.model, tokens);
    }

    /** Pre-flight for the context meter: the draft's tokens against what the workspace has left. */
    async measure(workspace: string, messages: readonly ChatMessage[], draft: string): Promise<DraftMeasurement> {
        const { numConversationTokens, numDraftTokens } = await this.renderer.measureDraft(messages, draft);
        const limit = this.engine.window.limit;
        const remainingTokens = limit - numConversationTokens - numDraftTokens;
        return {
            workspace,
            draftTokens: numDraftTokens,
            usedTokens: numConversationTokens,
            limit,
            remainingTokens,
            fits: remainingTokens > 0
        };
    }

    /**
     * I1–I7 over the whole engine, every free page scanned and every sealed page re-checksummed,
     * whatever the pool's size: the metadata in one step, the byte scans in slices of about a
     * millisecond, so an audit never holds a stream's next token for long (runSlicedAudit). One at a
     * time: a call while an audit runs gets that audit's answer.
     */
    audit(): Promise<AuditSummary> {
        this.#auditing ??= this.#runAudit().finally(() => {
            this.#auditing = undefined;
        });
        return this.#auditing;
    }

    async #runAudit(): Promise<AuditSummary> {
        const result = await runSlicedAudit(this.engine);
        const summary: AuditSummary = {
            ok: result.ok,
            violations: result.violations.slice(0, 20).map((violation) => ({ invariant: violation.invariant, message: violation.message })),
            numViolations: result.numViolations,
            numPagesChecked: result.numPagesChecked,
            numSealedPagesVerified: result.numSealedPagesVerified,
            numFreePagesScanned: result.numFreePagesScanned,
            durationMs: result.durationMs,
            at: performance.now() - this.#startedAt,
            numPagesChangedDuringScan: result.numPagesChangedDuringScan,
            cost: {
                metadataMs: result.cost.metadataMs,
                byteScanMs: result.cost.byteScanMs,
                numSlices: result.cost.numSlices,
                longestPauseMs: result.cost.longestPauseMs
            }
        };
        this.#audits.record(summary);
        this.#recordAudit(summary);
        return summary;
    }

    /**
     * An audit on the memory timeline: every one that found a violation, and a passing one at most
     * every AUDIT_EVENT_EVERY_MS with the count since, so the periodic audit does not crowd the
     * ring's handoffs and swaps out.
     */
    #recordAudit(summary: AuditSummary): void {
        this.#auditsSinceEvent++;
        const now = Date.now();
        if (summary.ok && now - this.#lastAuditEventAt < AUDIT_EVENT_EVERY_MS) {
            return;
        }
        this.engine.memoryEvents.record({
            kind: "audited",
            outcome: summary.ok ? "ok" : "failed",
            detail:
                `${summary.numPagesChecked} pages checked, ${summary.numSealedPagesVerified} sealed re-checksummed, ` +
                `${summary.numFreePagesScanned} free scanned; ${summary.numViolations} violations; ` +
                `audits since the last on the timeline: ${this.#auditsSinceEvent}`
        });
        this.#auditsSinceEvent = 0;
        this.#lastAuditEventAt = now;
    }

    /** The memory timeline after `afterSeq`, bounded per call (engine/audit/MemoryEventLog.ts). */
    memoryEvents(afterSeq: number): MemoryEventsPage {
        return this.engine.memoryEvents.after(afterSeq);
    }

    /**
     * The canary probe on the loaded model, in two temporary workspaces it forgets afterwards
     * (engine/canary/runCanaryProbe.ts). One at a time: a second is refused with canary_running.
     */
    runCanary(params: { readonly fillerTokens?: number } = {}): Promise<CanaryReport> {
        return runCanaryProbe(this.engine, this.renderer, params);
    }

    /** Finished greedy turns that `replay` can check, oldest first (the engine keeps the last 64 requests, by requestId). */
    replayableTurns(): ReplayableTurn[] {
        return this.engine
            .replayable()
            .filter((served) => served.sentByHost)
            .map((served) => ({ requestId: served.request, workspace: served.workspace, numTokens: served.tokens.length }));
    }

    /** Differential replay (I8) of a finished greedy turn, alone in a fresh context. */
    async replay(requestId: string): Promise<ReplaySummary> {
        const served = this.engine.replayable().findLast((entry) => entry.sentByHost && entry.request === requestId);
        if (served === undefined) {
            throw new ReplayUnavailableError(
                `Turn ${requestId.slice(0, 100)} cannot be replayed: only recent finished turns at temperature 0 are kept.`
            );
        }
        const result = await this.engine.replay(served.request);
        const divergence = result.firstDivergence;
        return {
            requestId,
            numTokens: result.numTokens,
            identical: result.identical,
            ...(divergence === undefined
                ? {}
                : {
                      firstDivergence: {
                          index: divergence.index,
                          served: this.renderer.describeToken(divergence.served).text,
                          replayed: divergence.replayed === undefined ? "" : this.renderer.describeToken(divergence.replayed).text
                      }
                  }),
            durationMs: result.durationMs
        };
    }

    listDrills(): DrillDescription[] {
        return drillCatalog.map((drill) => ({ ...drill, failureModes: [...drill.failureModes] }));
    }

    /** Runs a fault drill in sandboxed engines of its own (the tiny model); this engine's workspaces are untouched. */
    runDrill(id: string): Promise<DrillReport> {
        return runFaultDrill(id, this.engine.runtime);
    }

    async forgetWorkspace(workspace: string): Promise<void> {
        if (isCanaryWorkspace(workspace)) {
            throw new InvalidRequestError("That workspace belongs to a canary run, which forgets it itself when it ends.");
        }
        // A turn of it that runs is cancelled and waited for by the engine; one that finished meanwhile
        // may have kept its transcript, so the transcript goes after the KV.
        await this.engine.forgetWorkspace(workspaceId(workspace));
        this.#transcripts.delete(workspace);
    }

    snapshot(): EngineSnapshot {
        return snapshotEngine(this.engine, {
            at: performance.now() - this.#startedAt,
            tokensPerSecond: this.#throughput.perSecond(),
            ...(this.#audits.isRunning ? { audit: this.#audits.feed() } : {})
        });
    }

    /** What holds KV now, without the page map (the status bar's resourceUse, polled twice a second). */
    kvHolders(): KvHolders {
        const { config } = this.engine.pool;
        return {
            at: performance.now() - this.#startedAt,
            roles: snapshotRoles(this.engine),
            sequences: snapshotSequences(this.engine),
            bytesPerToken: config.pageBytes / config.pageTokens,
            pool: { numPages: config.numPages, numFreePages: this.engine.pool.numFreePages, pageBytes: config.pageBytes }
        };
    }

    /** Generated tokens per second of each workspace that generated in the last few seconds, fastest first. */
    workspaceTokensPerSecond(): { workspace: string; tokensPerSecond: number }[] {
        return this.#workspaceThroughput.rates();
    }

    /** VRAM of the engine's GPU (node-llama-cpp's getVramState), bytes; undefined on the CPU. */
    vramState(): Promise<{ usedBytes: number; totalBytes: number } | undefined> {
        return readVramState(this.engine.runtime);
    }

    async dispose(): Promise<void> {
        await this.#audits.stop();
        await this.#embedder.dispose();
        await this.engine.dispose();
    }
}

/** A turn's sampling as the runtime takes it: the three penalties together, or none when all are off. */
function samplingOptions(sampling: SamplingParams): SamplingOptions {
    const { repeatPenalty = 1, presencePenalty = 0, frequencyPenalty = 0 } = sampling;
    const penalized = repeatPenalty !== 1 || presencePenalty !== 0 || frequencyPenalty !== 0;
    return {
        temperature: sampling.temperature,
        topK: sampling.topK,
        topP: sampling.topP,
        seed: sampling.seed,
        minP: sampling.minP,
        xtc: sampling.xtc,
        penalties: penalized
            ? {
                  repeat: repeatPenalty,
                  presence: presencePenalty,
                  frequency: frequencyPenalty,
                  lastTokens: sampling.repeatLastTokens ?? DEFAULT_PENALTY_LAST_TOKENS
              }
            : undefined,
        tokenBias: sampling.tokenBias,
        grammar: sampling.grammar
    };
}

/** What a turn's usage says of its workspace's KV on disk: tokens loaded instead of prefilled, or why its file was refused. */
function diskKvUsage(restore: DiskKvRestore | undefined): Pick<TurnUsage, "restoredFromDiskTokens" | "diskKvRefused"> {
    switch (restore?.kind) {
        case undefined:
            return {};
        case "restored":
            return { restoredFromDiskTokens: restore.numTokens };
        case "refused":
            return { diskKvRefused: `Its KV on disk was refused, deleted and recomputed: ${restore.reason}.` };
    }
}
