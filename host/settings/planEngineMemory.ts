// What engine settings will take in memory, before they are applied (the settings screen's plan).
// Pure arithmetic over the model's facts and the machine's free memory; unit-tested alone.
import type { EngineSettings, EngineSettingName, EngineSettingsPlan, MemoryLine } from "../../contract/settings.js";
import type { KvCacheType, ModelFacts } from "../../contract/models.js";
import { defaultPoolPages } from "./KvaultSettings.js";

/** What the plan needs of the model: KV bytes per token by type, the file's size (about its weights), its memory kind, its training context. */
export type PlanModelFacts = Pick<
    ModelFacts,
    "kvBytesPerTokenByType" | "fileBytes" | "memory" | "trainContextSize" | "heads" | "numLayers"
>;

export interface MachineMemory {
    /** RAM the system could give a new process now (Linux: MemAvailable). */
    readonly freeRamBytes: number;
    /** The GPU's free memory; null when there is no GPU in use or it is not known. */
    readonly freeVramBytes: number | null;
}

export interface EngineMemoryInput {
    readonly settings: EngineSettings;
    /** What runs now: its memory comes back when the engine restarts. */
    readonly running: EngineSettings;
    readonly facts: PlanModelFacts;
    readonly machine: MachineMemory;
    /** Split mode has a prefill context besides the decode one; unified only the one. */
    readonly mode: "split" | "unified";
    /**
     * Whether gpu "auto" finds a GPU with a hardware device here (the running engine's
     * EngineInfo.compute): with "auto" or a number of layers, those layers and their KV go there.
     * Without one no byte is planned on a GPU, unless the settings name a backend.
     */
    readonly gpuBackend: boolean;
    /** Running turns the restart would end. */
    readonly numRunningTurns: number;
    /**
     * The draft model of speculation "draft-model": its facts, or why its file cannot serve (the
     * plan refuses then); absent without one. The running settings' draft is taken as the same file's.
     */
    readonly draft?: { readonly facts: PlanModelFacts } | { readonly problem: string };
}

const TYPE_NAMES: Readonly<Record<KvCacheType, string>> = { f16: "F16", q8_0: "Q8_0", q4_0: "Q4_0" };

/** The settings only a draft model uses. */
const DRAFT_SETTINGS: ReadonlySet<EngineSettingName> = new Set(["draftModel", "draftMaxTokens", "draftMinConfidence"]);

/** The memory lines of `settings` on this model; undefined KV bytes (a type the heads do not fit) count as 0, the plan refuses it. */
export function engineMemoryLines(
    settings: EngineSettings,
    facts: PlanModelFacts,
    mode: "split" | "unified",
    gpuBackend: boolean,
    draftFacts?: PlanModelFacts
): readonly MemoryLine[] {
    const perToken = facts.kvBytesPerTokenByType[settings.kvCacheType] ?? 0;
    const type = TYPE_NAMES[settings.kvCacheType];
    const share = gpuShare(settings, facts, gpuBackend);
    const numPages = settings.poolPages ?? defaultPoolPages(settings);
    const tokens = (count: number): string => count.toLocaleString("en-US");
    const contextKvBytes = settings.contextSize * settings.decodeSequences * perToken;
    const lines: MemoryLine[] = [];
    // A part of the layers on the GPU: that share of the weights and of each context's KV goes
    // there (llama.cpp keeps an offloaded layer's KV beside it), the rest stays in RAM, one line each.
    const place = (line: Omit<MemoryLine, "where">): void => {
        if (share === 0 || share === 1) {
            lines.push({ ...line, where: share === 1 ? "vram" : "ram" });
            return;
        }
        const onGpu = Math.round(line.bytes * share);
        lines.push({ ...line, label: `${line.label}, on the GPU`, bytes: onGpu, where: "vram" });
        lines.push({ ...line, label: `${line.label}, in RAM`, bytes: line.bytes - onGpu, where: "ram" });
    };
    place({ what: "weights", label: "Model weights (the file's size)", bytes: facts.fileBytes });
    place({
        what: "decodeKv",
        label: `KV of the decode context: ${tokens(settings.contextSize)} tokens × ${settings.decodeSequences} sequences × ${tokens(perToken)} bytes (${type})`,
        bytes: contextKvBytes
    });
    if (mode === "split") {
        place({
            what: "prefillKv",
            label: `KV of the prefill context: ${tokens(settings.contextSize)} tokens × ${settings.decodeSequences} sequences × ${tokens(perToken)} bytes (${type})`,
            bytes: contextKvBytes
        });
    }
    lines.push({
        what: "pagePool",
        label: `Host page pool: ${tokens(numPages)} pages × ${tokens(settings.pageTokens)} tokens × ${tokens(perToken)} bytes (${type})`,
        bytes: numPages * settings.pageTokens * perToken,
        where: "ram"
    });
    if (settings.speculation === "draft-model" && draftFacts !== undefined) {
        // node-llama-cpp puts all of the draft model on a GPU when there is one and offload is not off; its context keeps F16 KV
        const where = onGpu(settings, gpuBackend) ? "vram" : "ram";
        const draftPerToken = draftFacts.kvBytesPerTokenByType.f16 ?? 0;
        lines.push({ what: "draftWeights", label: "Draft model weights (the file's size)", bytes: draftFacts.fileBytes, where });
        lines.push({
            what: "draftKv",
            label: `KV of the draft model: ${tokens(settings.contextSize)} tokens × ${settings.decodeSequences} sequences × ${tokens(draftPerToken)} bytes (F16)`,
            bytes: settings.contextSize * settings.decodeSequences * draftPerToken,
            where
        });
    }
    return lines;
}

/**
 * The layers of the model node-llama-cpp counts for GPU offload: its blocks plus the output layer
 * (GgufInsights.totalLayers), the most a number of GPU layers may be.
 */
export function offloadableLayers(facts: Pick<ModelFacts, "numLayers">): number {
    return facts.numLayers + 1;
}

/** Whether `settings` put the model on a GPU: a named backend always, "off" never, else when "auto" finds a hardware GPU. */
function onGpu(settings: EngineSettings, gpuBackend: boolean): boolean {
    return settings.gpu === "off" ? false : settings.gpu !== "auto" ? true : gpuBackend;
}

/** The share of the model (0 to 1) on the GPU: none with "off" or without a GPU, all with "auto" layers, else layers / offloadable layers. */
function gpuShare(settings: EngineSettings, facts: PlanModelFacts, gpuBackend: boolean): number {
    if (!onGpu(settings, gpuBackend)) {
        return 0;
    }
    return settings.gpuLayers === "auto" ? 1 : Math.min(1, settings.gpuLayers / offloadableLayers(facts));
}

/**
 * The plan: each line of memory, the totals against what this machine has free (plus what the
 * running engine gives back), and whether it fits; a plan that does not fit says by how much and
 * what to change. llama.cpp's compute buffers come on top (tens of MiB for small models).
 */
export function planEngineMemory(input: EngineMemoryInput): EngineSettingsPlan {
    const { settings, running, facts, machine, mode, gpuBackend } = input;
    const draftFacts = draftFactsOf(input);
    const memory = engineMemoryLines(settings, facts, mode, gpuBackend, draftFacts);
    const runningMemory = engineMemoryLines(
        running,
        facts,
        mode,
        gpuBackend,
        running.draftModel === settings.draftModel ? draftFacts : undefined
    );
    const sum = (lines: readonly MemoryLine[], where: MemoryLine["where"]): number =>
        lines.filter((line) => line.where === where).reduce((total, line) => total + line.bytes, 0);
    const ramNeededBytes = sum(memory, "ram");
    const vramNeededBytes = sum(memory, "vram");
    const ramAvailableBytes = machine.freeRamBytes + sum(runningMemory, "ram");
    const vramAvailableBytes = machine.freeVramBytes === null ? null : machine.freeVramBytes + sum(runningMemory, "vram");
    // the draft model's path and drafting are in force only with speculation "draft-model": changed without it, they restart nothing
    const inForce = (of: EngineSettings, name: EngineSettingName): boolean => !DRAFT_SETTINGS.has(name) || of.speculation === "draft-model";
    const changed = (Object.keys(settings) as EngineSettingName[]).filter(
        (name) => settings[name] !== running[name] && (inForce(settings, name) || inForce(running, name))
    );

    const problems: string[] = [];
    const notes: string[] = [];
    const perToken = facts.kvBytesPerTokenByType[settings.kvCacheType];
    if (perToken === undefined) {
        const heads = facts.heads === undefined ? "" : ` (K ${facts.heads.kHeadSize}, V ${facts.heads.vHeadSize} values)`;
        problems.push(
            `This model's heads${heads} are not a whole number of 32-value blocks, so the KV cache cannot be kept in ${TYPE_NAMES[settings.kvCacheType]}. Use f16.`
        );
    }
    if (settings.gpuLayers !== "auto" && settings.gpuLayers > offloadableLayers(facts)) {
        const total = offloadableLayers(facts);
        problems.push(
            `GPU layers is ${settings.gpuLayers}, but this model has ${facts.numLayers} layers and an output layer (${total} in all). Give 0 to ${total}, or "auto" for all that fit.`
        );
    }
    if (settings.gpuLayers !== "auto" && !onGpu(settings, gpuBackend)) {
        notes.push(
            `No GPU: layers stay on the CPU. The engine runs on the CPU alone, so node-llama-cpp keeps all ${offloadableLayers(facts)} layers there, whatever the number.`
        );
    }
    if (input.draft !== undefined && "problem" in input.draft) {
        problems.push(input.draft.problem);
    }
    if (settings.kvCacheType !== "f16" && !settings.flashAttention) {
        problems.push(
            `The KV cache type ${TYPE_NAMES[settings.kvCacheType]} needs flash attention, which is off: llama.cpp keeps V transposed without it. Turn flash attention on, or use f16.`
        );
    }
    if (ramNeededBytes > ramAvailableBytes) {
        problems.push(
            `These settings need ${readableBytes(ramNeededBytes)} of RAM, and this machine has ${readableBytes(ramAvailableBytes)} for the engine ` +
                `(${readableBytes(machine.freeRamBytes)} free now, plus ${readableBytes(ramAvailableBytes - machine.freeRamBytes)} the running engine gives back): ` +
                `${readableBytes(ramNeededBytes - ramAvailableBytes)} too much. ${remedy(input, ramAvailableBytes, "ram")}`
        );
    }
    if (vramAvailableBytes !== null && vramNeededBytes > vramAvailableBytes) {
        problems.push(
            `These settings need ${readableBytes(vramNeededBytes)} of GPU memory, and the GPU has ${readableBytes(vramAvailableBytes)} for the engine: ` +
                `${readableBytes(vramNeededBytes - vramAvailableBytes)} too much. ${remedy(input, vramAvailableBytes, "vram")} Or turn GPU offload off.`
        );
    }
    if (vramAvailableBytes === null && vramNeededBytes > 0) {
        notes.push(`${readableBytes(vramNeededBytes)} go to the GPU, whose free memory Kvault does not measure here.`);
    }
    if (facts.trainContextSize !== undefined && settings.contextSize > facts.trainContextSize) {
        notes.push(
            `The context size (${settings.contextSize.toLocaleString("en-US")} tokens) is above the ${facts.trainContextSize.toLocaleString("en-US")} the model was trained with; answers past that may degrade.`
        );
    }
    if (!facts.memory.plainKvCache) {
        notes.push(`This model runs unified (no prefill context, no handoff): ${facts.memory.reason}`);
    }
    const numTurns = input.numRunningTurns;
    const restart =
        changed.length === 0
            ? null
            : `The engine restarts on the same model${numTurns === 0 ? "; no turn is running." : `; ${numTurns} running turn${numTurns === 1 ? "" : "s"} end with engine_settings_changed (send again after).`}`;
    return {
        settings,
        changed,
        memory,
        ramNeededBytes,
        vramNeededBytes,
        ramAvailableBytes,
        vramAvailableBytes,
        fits: problems.length === 0,
        problems,
        notes,
        restart
    };
}

/** The draft model's facts, when the plan has a draft model that can serve. */
function draftFactsOf(input: EngineMemoryInput): PlanModelFacts | undefined {
    return input.draft !== undefined && "facts" in input.draft ? input.draft.facts : undefined;
}

/** What to change so that it fits: the largest context size that would, and the other levers. */
function remedy(input: EngineMemoryInput, availableBytes: number, where: MemoryLine["where"]): string {
    const { settings, facts, mode, gpuBackend } = input;
    // The bytes in `where` that do not depend on the window, and those of each page-sized block of it.
    const at = (contextSize: number): number =>
        engineMemoryLines({ ...settings, contextSize }, facts, mode, gpuBackend, draftFactsOf(input))
            .filter((line) => line.where === where)
            .reduce((total, line) => total + line.bytes, 0);
    const fixed = at(0);
    const perBlock = at(settings.pageTokens) - fixed;
    const fitting = perBlock <= 0 ? 0 : Math.floor((availableBytes - fixed) / perBlock) * settings.pageTokens;
    const levers = `fewer decode sequences (${settings.decodeSequences} now)${settings.kvCacheType === "f16" ? ", or the KV cache type q8_0 (about half the KV bytes)" : ""}`;
    if (fitting < 16) {
        return `Even a tiny context does not fit: the model's weights and the fixed pool take ${readableBytes(fixed)}. Use a smaller model, close other programs, or ${levers}.`;
    }
    return `Lower the context size to at most ${fitting.toLocaleString("en-US")} tokens, or use ${levers}.`;
}

/** "1.5 GiB", "640 MiB", "12 KiB": for people; the exact bytes are in the plan's numbers. */
export function readableBytes(numBytes: number): string {
    const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let value = numBytes;
    let unit = 0;
    while (Math.abs(value) >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit++;
    }
    const digits = unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2;
    return `${value.toLocaleString("en-US", { maximumFractionDigits: digits })} ${units[unit]}`;
}
