import type { EngineCompute } from "../contract/engineCompute.js";
import { invariant } from "./core/invariant.js";
import { bytesPerToken, describeLayoutMismatch, layoutFingerprint, type KvLayout } from "./codec/KvLayout.js";
import { KvCacheTypeError, StateLayoutMismatchError } from "./codec/codecErrors.js";
import { whyKvCacheTypeRefused } from "./codec/kvCacheTypes.js";
import { CapacityConfigError, EngineConfigError, resolveEngineConfig, type EngineConfig, type EngineConfigInput } from "./EngineConfig.js";
import { productionPolicies, type EnginePolicies } from "./EnginePolicies.js";
import type { KvEngineHooks, ModeReport, WindowReport } from "./engineTypes.js";
import { modelFingerprint } from "./model/modelFingerprint.js";
import { PagePool } from "./pages/PagePool.js";
import { MemoryEventLog } from "./audit/MemoryEventLog.js";
import { requestLimit, type MeasuredCapacities } from "./request/admission.js";
import { describeModelMemory } from "./runtime/describeModelMemory.js";
import { LlamaRoleContext, type RoleContextOptions } from "./runtime/LlamaRoleContext.js";
import { LlamaRuntime } from "./runtime/LlamaRuntime.js";
import { oneSequenceABatch } from "./runtime/oneSequenceABatch.js";
import { ComputeTurns } from "./runtime/ComputeTurns.js";
import { PrivateStateDirectory } from "./runtime/PrivateStateDirectory.js";
import { chooseStateExchange, createStateExchange, type StateExchangeChoice } from "./runtime/createStateExchange.js";
import { readKvHeadGeometry } from "./runtime/readKvHeadGeometry.js";
import type { Speculation } from "./runtime/createTokenPredictors.js";
import { DraftModelError } from "./runtime/DraftModelError.js";
import { installedSpeculativeValidation } from "./runtime/speculationFix/speculativeValidation.js";
import type { RoleContext } from "./runtime/RoleContext.js";
import type { LlamaModel } from "./runtime/types.js";

/**
 * How long each role's ggml pool threads poll for the next graph before they sleep (ggml's level,
 * 0–100: about 131,000 spins per step). Decode polls briefly, long enough to bridge the gap
 * between a token's graph and the next, short enough that a pool whose stream has just ended does
 * not hold a core while the next prompt prefills (llama-server's default of 50 delayed a chat's
 * later turns; figures in docs/measurements.md). Prefill sleeps at once: its graphs come in bursts,
 * and a thread polling after one would take a core from the decode context beside it.
 */
const THREADPOOL_POLL: Readonly<Record<RoleContextOptions["role"], number>> = { prefill: 0, decode: 2, unified: 2 };

/**
 * Which roles keep their generating sequences in one batch a step, with state operations let in
 * between steps (gatherDecodes). The contexts that sample; and prefill, which never generates, for
 * the state operations alone: a prompt's handoff leaves between two batches of the next prompt,
 * so prompts arriving together reach their first tokens one after another, not all after the
 * last one's prefill (its graphs take turns with the early streams' steps, ComputeTurns). Every
 * role fills its batches in sequence order (orderDecodesBySequence).
 */
const GATHER_DECODES: Readonly<Record<RoleContextOptions["role"], boolean>> = { prefill: true, decode: true, unified: true };

/**
 * How each role fills a batch from the tokens queued: prefill gives each batch to one prompt, so
 * that llama.cpp's flash attention computes it on its tiled path (oneSequenceABatch); the contexts
 * that sample share each batch among their sequences (node-llama-cpp's default), a token each.
 */
const BATCH_ITEMS: Readonly<Record<RoleContextOptions["role"], RoleContextOptions["batchItems"]>> = {
    prefill: oneSequenceABatch(),
    decode: undefined,
    unified: undefined
};

/** How the engine tunes a context of `role`: its pool's polling, whether it gathers decodes, how it fills batches. */
export function roleTuning(role: RoleContextOptions["role"]): Pick<RoleContextOptions, "threadpoolPoll" | "gatherDecodes" | "batchItems"> {
    return { threadpoolPoll: THREADPOOL_POLL[role], gatherDecodes: GATHER_DECODES[role], batchItems: BATCH_ITEMS[role] };
}

/** Everything a `KvEngine` is made of, measured from what was actually created. */
export interface EngineParts {
    readonly config: EngineConfig;
    readonly runtime: LlamaRuntime;
    /** Whether the engine started the runtime itself (and so disposes of it). */
    readonly ownsRuntime: boolean;
    readonly model: LlamaModel;
    /** What the engine computes on, measured once the model and contexts are loaded (backend, binary, devices, layers, device memory). */
    readonly compute: EngineCompute;
    /** The draft model of speculative decoding ("draft-model"); the engine disposes of it after the contexts. */
    readonly draftModel: LlamaModel | undefined;
    readonly modelFingerprint: string;
    readonly layout: KvLayout;
    readonly layoutFingerprint: string;
    readonly pool: PagePool;
    /** The memory timeline every part records into (contract/memoryEvents.ts). */
    readonly memoryEvents: MemoryEventLog;
    readonly stateDirectory: PrivateStateDirectory;
    /** How states leave and enter llama.cpp, and why: "memory" through the patched addon, "file" through `stateDirectory`. */
    readonly stateExchange: StateExchangeChoice;
    /** The context that generates: decode in split mode, the unified context otherwise. */
    readonly decode: RoleContext;
    readonly prefill: RoleContext | undefined;
    /** Split mode: the turns the contexts' graphs compute in, one at a time (runtime/ComputeTurns.ts); undefined in unified mode. */
    readonly computeTurns: ComputeTurns | undefined;
    readonly window: WindowReport;
    readonly mode: ModeReport;
    readonly hooks: KvEngineHooks;
    readonly policies: EnginePolicies;
    /** A fresh unified context of one sequence and `contextSize` tokens, for replay and the canary's baseline. */
    freshContext(contextSize: number): Promise<RoleContext>;
}

export interface EngineStartOptions {
    /** A loaded binding to share (the fault drills' sandboxes, tests); started here when absent. */
    readonly runtime?: LlamaRuntime;
    readonly hooks?: KvEngineHooks;
    /** Where the engine records its memory timeline; a fresh ring of MEMORY_EVENT_LOG_CAPACITY when absent. */
    readonly memoryEvents?: MemoryEventLog;
    /**
     * For fault drills alone (engine/drills/runFaultDrill.ts): a drill's sandboxed engine swaps a
     * policy for its leaky variant to show the leak its guard prevents. Nothing else passes any;
     * the engine process and its protocol cannot.
     */
    readonly policies?: Partial<EnginePolicies>;
}

/**
 * Loads the model and makes the contexts and the pool, then measures: the mode the model's memory
 * allows, the KV layout both contexts share, and the window the contexts and pool can serve.
 * Anything made is disposed again when a later step fails.
 */
export async function startEngineParts(input: EngineConfigInput, options: EngineStartOptions = {}): Promise<EngineParts> {
    const config = resolveEngineConfig(input);
    await refuseUnfitKvCacheType(config);
    const policies: EnginePolicies = { ...productionPolicies, ...options.policies };
    const runtime =
        options.runtime ??
        (await LlamaRuntime.start({ gpu: config.gpu, maxThreads: config.threads, preferLocalBuild: config.llamaBinary === "auto" }));
    const cleanup: (() => Promise<void> | void)[] = options.runtime ? [] : [() => runtime.dispose()];
    try {
        const fingerprint = modelFingerprint(config.modelPath);
        const model = await runtime.loadModel(config.modelPath, config.gpuLayers);
        cleanup.unshift(() => model.dispose());
        const stateDirectory = PrivateStateDirectory.create(config.stateRoot);
        cleanup.unshift(() => stateDirectory.dispose());
        const stateExchange = chooseStateExchange(config.stateExchange, runtime.llama);

        const memory = describeModelMemory(model);
        const mode: ModeReport =
            config.mode === "split" && !memory.plainKvCache
                ? { requested: "split", effective: "unified", reason: `Running unified (no prefill/decode split): ${memory.reason}.` }
                : { requested: config.mode, effective: config.mode };
        const split = mode.effective === "split";
        const speculation = await loadSpeculation(config, runtime);
        const draftModel = typeof speculation === "object" ? speculation.draftModel : undefined;
        if (draftModel !== undefined) {
            cleanup.unshift(() => draftModel.dispose());
        }
        const computeTurns = split ? new ComputeTurns() : undefined;
        const role = (
            options: Pick<RoleContextOptions, "role" | "contextSize" | "numSequences"> & Partial<Pick<RoleContextOptions, "batchItems">>
        ): Promise<LlamaRoleContext> =>
            LlamaRoleContext.create(
                model,
                {
                    speculation: options.role === "prefill" ? undefined : speculation, // prefill never samples
                    batchSize: config.batchSize,
                    flashAttention: config.flashAttention,
                    kvCacheType: config.kvCacheType,
                    threads: config.threads,
                    computeTurns,
                    ...roleTuning(options.role),
                    ...options
                },
                createStateExchange(stateExchange, stateDirectory)
            );

        const decode = await role({
            role: split ? "decode" : "unified",
            contextSize: config.decodeContextSize,
            numSequences: config.numDecodeSequences
        });
        cleanup.unshift(() => decode.dispose());
        // While streams decode, a prompt prefills a chunk at a time between their steps (ComputeTurns).
        const chunkWhileStreaming = (): number => (decode.numGenerating > 0 ? config.prefillChunkTokens : Infinity);
        const prefill = split
            ? await role({
                  role: "prefill",
                  contextSize: config.prefillContextSize,
                  numSequences: config.numPrefillSequences,
                  batchItems: oneSequenceABatch(chunkWhileStreaming)
              })
            : undefined;
        if (prefill) {
            cleanup.unshift(() => prefill.dispose());
            invariant(
                prefill.layout && decode.layout && prefill.numStreams !== undefined && decode.numStreams !== undefined,
                "split mode needs both contexts' KV layouts measured"
            );
            const mismatch = describeLayoutMismatch(decode.layout, prefill.layout);
            if (mismatch !== undefined) {
                throw new StateLayoutMismatchError(`prefill and decode contexts differ: ${mismatch}`);
            }
        }

        // Unified mode over a memory pages cannot hold gets an empty layout: its pool is never used.
        const layout: KvLayout = decode.layout ?? { vTransposed: false, layers: [] };
        const pageBytes = Math.max(1, config.pageTokens * bytesPerToken(layout));
        const memoryEvents = options.memoryEvents ?? new MemoryEventLog();
        const pool = new PagePool({ numPages: config.numPages, pageTokens: config.pageTokens, pageBytes }, policies, memoryEvents);
        cleanup.unshift(() => pool.dispose());
        await pool.startHashingThreads(); // before the engine serves: their boot is never a first request's wait

        return {
            config,
            runtime,
            ownsRuntime: options.runtime === undefined,
            model,
            compute: await runtime.report(model, config.gpuLayers),
            draftModel,
            modelFingerprint: fingerprint,
            layout,
            layoutFingerprint: layoutFingerprint(layout, fingerprint),
            pool,
            memoryEvents,
            stateDirectory,
            stateExchange,
            decode,
            prefill,
            computeTurns,
            window: measureWindow(config, decode, prefill, split),
            mode,
            hooks: options.hooks ?? {},
            policies,
            freshContext: (contextSize) =>
                LlamaRoleContext.create(
                    model,
                    {
                        role: "unified",
                        contextSize,
                        numSequences: 1,
                        flashAttention: config.flashAttention,
                        kvCacheType: config.kvCacheType,
                        threads: config.threads,
                        computeTurns, // a replay's or the canary's graphs take their turns with the chats' (split mode)
                        ...roleTuning("unified")
                    },
                    createStateExchange(stateExchange, stateDirectory)
                )
        };
    } catch (error) {
        for (const step of cleanup) {
            await step();
        }
        throw error;
    }
}

/**
 * The speculation configured, its draft model loaded. Refused (EngineConfigError) where the
 * installed node-llama-cpp lacks the speculative validation fix `npm install` applies: without it
 * at most one drafted token a step is accepted.
 */
async function loadSpeculation(config: EngineConfig, runtime: LlamaRuntime): Promise<Speculation | undefined> {
    if (config.speculation === undefined) {
        return undefined;
    }
    const fix = installedSpeculativeValidation();
    if (fix !== "fixed") {
        throw new EngineConfigError(
            `speculation is "${config.speculation}", but the installed node-llama-cpp ${fix === "unfixed" ? "lacks" : "is not one that Kvault knows for"} ` +
                "the speculative validation fix (without it at most one drafted token a step is accepted). " +
                (fix === "unfixed" ? "Run npm install, which applies it, or leave speculation out." : "Leave speculation out.")
        );
    }
    if (config.speculation === "input-lookup") {
        return "input-lookup";
    }
    const draftModelPath = config.draftModelPath!;
    let draftModel: LlamaModel;
    try {
        draftModel = await runtime.loadModel(draftModelPath);
    } catch (error) {
        throw new DraftModelError(
            `The draft model ${draftModelPath} did not load (${error instanceof Error ? error.message : String(error)}); ` +
                "check the path, or leave speculation out."
        );
    }
    return { draftModel, maxTokens: config.draftMaxTokens, minConfidence: config.draftMinConfidence };
}

/**
 * A quantized KV cache type the model's heads cannot take is refused from the header, before the
 * model is loaded. F16 takes every model; a header without head sizes is left to llama.cpp.
 */
async function refuseUnfitKvCacheType(config: EngineConfig): Promise<void> {
    if (config.kvCacheType === "f16") {
        return;
    }
    const heads = await readKvHeadGeometry(config.modelPath);
    const reason = heads === undefined ? undefined : whyKvCacheTypeRefused(config.kvCacheType, config.flashAttention, heads);
    if (reason !== undefined) {
        throw new KvCacheTypeError(config.kvCacheType, reason);
    }
}

/** The window served: the configured one, clamped to the measured capacities, or refused when clamping is not allowed. */
function measureWindow(config: EngineConfig, decode: RoleContext, prefill: RoleContext | undefined, split: boolean): WindowReport {
    const capacities: MeasuredCapacities = {
        window: config.window,
        prefill: prefill?.sequenceCapacity ?? decode.sequenceCapacity,
        decode: decode.sequenceCapacity,
        pool: split ? config.numPages * config.pageTokens : Number.MAX_SAFE_INTEGER
    };
    const limit = requestLimit(capacities);
    const clamped = limit.boundBy !== "window";
    if (clamped && config.onWindowAboveCapacity === "refuse") {
        const numbers = limit.limit.toLocaleString("en-US");
        throw new CapacityConfigError(
            `The window is set to ${config.window.toLocaleString("en-US")} tokens, but the measured ${limit.boundBy} capacity is ` +
                `${numbers}. Lower the window to ${numbers} or give the ${limit.boundBy} ${limit.boundBy === "pool" ? "more pages" : "a larger context"}.`
        );
    }
    return { ...limit, configured: config.window, clamped, capacities };
}
