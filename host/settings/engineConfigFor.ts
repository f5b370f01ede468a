import type { EngineSettings } from "../../contract/settings.js";
import type { EngineConfigInput } from "../../engine/index.js";
import { defaultPoolPages } from "./KvaultSettings.js";

/**
 * The engine configuration engine settings stand for: the window is each prefill and decode
 * sequence's size, one prefill sequence per decode sequence (the engine's default), and a pool
 * left to Kvault holds a full window for every decode sequence plus one for the handoff. The
 * backend and the layers on it are two settings: "auto" layers leave the count to node-llama-cpp.
 * Speculation "off" is none; a draft model is the engine's only with speculation "draft-model".
 */
export function engineConfigFor(settings: EngineSettings): Omit<EngineConfigInput, "modelPath"> {
    return {
        window: settings.contextSize,
        prefillContextSize: settings.contextSize,
        decodeContextSize: settings.contextSize,
        numDecodeSequences: settings.decodeSequences,
        numPrefillSequences: settings.decodeSequences,
        pageTokens: settings.pageTokens,
        numPages: settings.poolPages ?? defaultPoolPages(settings),
        kvCacheType: settings.kvCacheType,
        flashAttention: settings.flashAttention,
        threads: settings.threads ?? undefined,
        gpu: settings.gpu === "off" ? false : settings.gpu,
        // off keeps every layer on the CPU whatever the count, so the engine is given none
        gpuLayers: settings.gpu === "off" || settings.gpuLayers === "auto" ? undefined : settings.gpuLayers,
        speculation: settings.speculation === "off" ? undefined : settings.speculation,
        // the path is kept while speculation is off or by input lookup; the engine takes it for "draft-model" alone
        draftModelPath: settings.speculation === "draft-model" ? (settings.draftModel ?? undefined) : undefined,
        draftMaxTokens: settings.draftMaxTokens,
        draftMinConfidence: settings.draftMinConfidence
    };
}
