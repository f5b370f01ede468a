// The engine settings form's pure parts: its fields, what the inputs hold, and the change they
// ask for (checked here as the host checks it, so a typo is said at once, by name).
import {
    engineSettingLimits,
    isDraftConfidence,
    isGpuLayerCount,
    speculationSettings,
    type EngineSettingName,
    type EngineSettings,
    type GpuLayersSetting
} from "../../contract/settings.js";
import { gpuBackendNames, type GpuBackendName } from "../../contract/engineCompute.js";
import { kvCacheTypes, type KvCacheType } from "../../contract/models.js";

/** What each input holds, as text (numbers, a path) or a choice; "" in threads and poolPages is Kvault's choice, in draftModel none. */
export type EngineForm = Readonly<Record<EngineSettingName, string>>;

export interface EngineField {
    readonly name: EngineSettingName;
    readonly label: string;
    /** One line on what it does and what it costs. */
    readonly help: string;
    /**
     * "gpuLayers": "auto" or a number of layers (a choice, and a count beside it for the number);
     * "path": a file's full path, or none; "probability": a number from 0 to 1.
     */
    readonly kind: "count" | "countOrAuto" | "choice" | "gpuLayers" | "path" | "probability";
    readonly choices?: readonly { readonly value: string; readonly label: string }[];
}

/** The GPU layers choice that shows the layer count's input; the form holds the count itself (digits) then. */
export const GPU_LAYERS_CHOICE = "layers";

/** Which of the GPU layers choices ("auto" or a number) the form's text stands for. */
export function gpuLayersChoiceOf(text: string): string {
    return text === "auto" ? "auto" : GPU_LAYERS_CHOICE;
}

const BACKEND_LABELS: Readonly<Record<GpuBackendName, string>> = {
    cuda: "CUDA",
    vulkan: "Vulkan (a software device too)",
    metal: "Metal"
};

export const engineFields: readonly EngineField[] = [
    { name: "contextSize", label: "Context size (tokens)", help: "Each workspace's window; KV grows with it.", kind: "count" },
    {
        name: "decodeSequences",
        label: "Decode sequences (workspaces generating at once)",
        help: "Workspaces generating at once; each holds a window of KV.",
        kind: "count"
    },
    {
        name: "kvCacheType",
        label: "KV cache type",
        help: "Q8_0 keeps a token's KV in about half the bytes of F16, Q4_0 in about a quarter; both need flash attention.",
        kind: "choice",
        choices: kvCacheTypes.map((type) => ({ value: type, label: type.toUpperCase() }))
    },
    {
        name: "flashAttention",
        label: "Flash attention",
        help: "Faster, and V kept in rows (pages copy faster).",
        kind: "choice",
        choices: [
            { value: "on", label: "On" },
            { value: "off", label: "Off" }
        ]
    },
    {
        name: "gpu",
        label: "GPU backend",
        help: "A hardware GPU when there is one, else the CPU; a named backend whatever its device; or the CPU alone.",
        kind: "choice",
        choices: [
            { value: "auto", label: "Auto (a hardware GPU if any)" },
            { value: "off", label: "Off (CPU only)" },
            ...gpuBackendNames.map((name) => ({ value: name, label: BACKEND_LABELS[name] }))
        ]
    },
    {
        name: "gpuLayers",
        label: "GPU offload",
        help: "All layers that fit on the GPU backend, or a number of layers on it (the rest on the CPU).",
        kind: "gpuLayers",
        choices: [
            { value: "auto", label: "All layers that fit" },
            { value: GPU_LAYERS_CHOICE, label: "A number of layers" }
        ]
    },
    { name: "threads", label: "CPU threads", help: "Empty: llama.cpp's choice (the machine's cores).", kind: "countOrAuto" },
    { name: "pageTokens", label: "Page size (tokens)", help: "Token positions per KV page in host memory.", kind: "count" },
    { name: "poolPages", label: "Pool size (pages)", help: "Empty: a window for every decode sequence, plus one.", kind: "countOrAuto" },
    {
        name: "speculation",
        label: "Speculative decoding",
        help: "Tokens drafted ahead and checked by the model in one step: from the chat's own text, or by a draft model. Each answer shows how many drafts were accepted.",
        kind: "choice",
        choices: speculationSettings.map((value) => ({
            value,
            label: value === "off" ? "Off" : value === "input-lookup" ? "Input lookup (the chat's own tokens)" : "Draft model"
        }))
    },
    {
        name: "draftModel",
        label: "Draft model (GGUF path)",
        help: "A smaller or more quantized model with this model's tokenizer; used when speculative decoding is Draft model.",
        kind: "path"
    },
    {
        name: "draftMaxTokens",
        label: "Draft tokens (most ahead of a step)",
        help: "The draft model drafts up to this many tokens before the model checks them.",
        kind: "count"
    },
    {
        name: "draftMinConfidence",
        label: "Draft min probability (0–1)",
        help: "A token the draft model gives less than this ends its draft; 0 always drafts the most.",
        kind: "probability"
    }
];

export function formOf(settings: EngineSettings): EngineForm {
    return {
        contextSize: String(settings.contextSize),
        decodeSequences: String(settings.decodeSequences),
        kvCacheType: settings.kvCacheType,
        flashAttention: settings.flashAttention ? "on" : "off",
        gpu: settings.gpu,
        gpuLayers: String(settings.gpuLayers),
        threads: settings.threads === null ? "" : String(settings.threads),
        pageTokens: String(settings.pageTokens),
        poolPages: settings.poolPages === null ? "" : String(settings.poolPages),
        speculation: settings.speculation,
        draftModel: settings.draftModel ?? "",
        draftMaxTokens: String(settings.draftMaxTokens),
        draftMinConfidence: String(settings.draftMinConfidence)
    };
}

export type FormReading =
    | { readonly kind: "change"; readonly change: Partial<EngineSettings> }
    | { readonly kind: "invalid"; readonly message: string };

/** The settings the form asks to change from `running` (only those that differ), or why an input is not usable. */
export function readEngineForm(form: EngineForm, running: EngineSettings): FormReading {
    const next: Record<string, unknown> = {};
    for (const field of engineFields) {
        const text = form[field.name].trim();
        if (field.kind === "gpuLayers") {
            const reading = readGpuLayers(text, field.label);
            if (typeof reading === "object") {
                return reading;
            }
            next[field.name] = reading;
            continue;
        }
        if (field.kind === "choice") {
            next[field.name] = field.name === "flashAttention" ? text === "on" : text;
            continue;
        }
        if (field.kind === "probability") {
            const value = Number(text);
            if (!/^(0|1|0?\.\d+|1\.0*)$/.test(text) || !isDraftConfidence(value)) {
                return {
                    kind: "invalid",
                    message: `${field.label} is "${text.slice(0, 20)}"; give a probability from 0 to 1, such as 0.6.`
                };
            }
            next[field.name] = value;
            continue;
        }
        if (field.kind === "path") {
            if (text !== "" && !isFullPath(text)) {
                return {
                    kind: "invalid",
                    message: `${field.label} is "${text.slice(0, 60)}"; give the file's full path, or leave it empty.`
                };
            }
            next[field.name] = text === "" ? null : text;
            continue;
        }
        if (field.kind === "countOrAuto" && text === "") {
            next[field.name] = null;
            continue;
        }
        const { min, max } = engineSettingLimits[field.name as keyof typeof engineSettingLimits];
        const value = Number(text);
        if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
            return {
                kind: "invalid",
                message: `${field.label} is "${text.slice(0, 20)}"; give a whole number from ${min.toLocaleString("en-US")} to ${max.toLocaleString("en-US")}${field.kind === "countOrAuto" ? ", or leave it empty for Kvault's choice" : ""}.`
            };
        }
        next[field.name] = value;
    }
    if (!kvCacheTypes.includes(next.kvCacheType as KvCacheType)) {
        return { kind: "invalid", message: `KV cache type is "${String(next.kvCacheType)}"; choose ${kvCacheTypes.join(", ")}.` };
    }
    if (next.speculation === "draft-model" && next.draftModel === null) {
        return { kind: "invalid", message: "Speculative decoding is Draft model; give the draft model's full path." };
    }
    const change: Partial<Record<EngineSettingName, unknown>> = {};
    for (const name of Object.keys(next) as EngineSettingName[]) {
        if (next[name] !== running[name]) {
            change[name] = next[name];
        }
    }
    return { kind: "change", change: change as Partial<EngineSettings> };
}

/** A full path: from the root on POSIX, from a drive letter or a network share on Windows; the host resolves nothing relative to its own folder. */
function isFullPath(text: string): boolean {
    return text.startsWith("/") || /^[A-Za-z]:[\\/]/.test(text) || text.startsWith("\\\\");
}

/** "auto" or a number of layers within the RPC's bounds; the model's own count is the plan's to check. */
function readGpuLayers(text: string, label: string): GpuLayersSetting | { readonly kind: "invalid"; readonly message: string } {
    if (text === "auto") {
        return text;
    }
    const value = Number(text);
    if (!/^\d+$/.test(text) || !isGpuLayerCount(value)) {
        const { min, max } = engineSettingLimits.gpuLayers;
        return {
            kind: "invalid",
            message: `${label}: the number of layers is "${text.slice(0, 20)}"; give a whole number from ${min} to ${max.toLocaleString("en-US")} (the plan checks it against the model's layers), or choose All layers that fit.`
        };
    }
    return value;
}
