import net from "node:net";
import os from "node:os";
import path from "node:path";
import {
    engineSettingLimits,
    isDraftConfidence,
    isGpuBackendSetting,
    type EngineSettingName,
    type EngineSettings
} from "../../contract/settings.js";
import { engineDefaults, isKvCacheType, KvaultError, kvCacheTypes, type KvCacheType } from "../../engine/index.js";
import { repeatedBackendName, type BackendConfig } from "../backends/BackendConfig.js";
import { parseBackendOption } from "../backends/parseBackendOption.js";
import { normalizeOrigin } from "../http/corsPolicy.js";
import { modelPoolSettingDefaults, modelPoolSettingLimits, type ModelPoolSettings } from "../../contract/modelPoolSettings.js";

export class ServeOptionsError extends KvaultError {
    readonly code = "invalid_serve_options";
}

export interface ServeOptions {
    /** A loopback address unless `allowRemote`. */
    readonly host: string;
    /** The user asked, with --allow-remote, to listen on an address other machines may reach. */
    readonly allowRemote: boolean;
    readonly port: number;
    /** A GGUF path, or a built-in preset generated into the data directory on first use. */
    readonly model: { readonly kind: "preset"; readonly preset: "tiny" | "small" } | { readonly kind: "file"; readonly path: string };
    readonly mode: "split" | "unified";
    /** The type of the K and V caches (--kv-type). */
    readonly kvType: KvCacheType;
    readonly context: number;
    readonly prefillCapacity: number;
    readonly decodeSequences: number;
    readonly pageTokens: number;
    readonly poolPages: number;
    readonly apiKey?: string;
    /** --extra-api-key ID=KEY, repeatable: API keys with a workspace namespace each (host/http/ApiKeys.ts). */
    readonly extraApiKeys: readonly { readonly id: string; readonly key: string }[];
    /** --cors-origin URL, repeatable: origins whose pages may call the API from a browser (host/http/corsPolicy.ts). */
    readonly corsOrigins: readonly string[];
    /** --log-prompts: the request log (stderr, the developer panel) shows each request's prompt text too; off by default. */
    readonly logPrompts: boolean;
    readonly dataDir: string;
    /** A download that gains no byte for this long is stopped and kept to resume; undefined: ModelDownloads' default (60 s). */
    readonly downloadStallSeconds?: number;
    /** The page map's demo mode: milliseconds each handoff step waits (the engine's handoffStepDelayMs); 0 when off. */
    readonly handoffDemoMs: number;
    /** The streaming demo mode: milliseconds each generated token waits before the next (the engine's tokenDelayMs); 0 when off. */
    readonly streamDemoMs: number;
    /**
     * The engine settings given on the command line, which override `<data-dir>/settings.json`'s
     * for this run (host/settings/); a setting not given comes from the file.
     */
    readonly engineFromCommandLine: Readonly<Partial<EngineSettings>>;
    /** Each engine setting's flag as this run's command line gave it (gpu: --gpu, or --gpu-layers when that gave "off"). */
    readonly engineFlags: Readonly<Record<EngineSettingName, string>>;
    /** Whether --model was given (else the settings' model, or the demo model). */
    readonly modelGiven: boolean;
    /** --prefill-capacity was given (else each prefill sequence is as large as the window). */
    readonly prefillCapacityGiven: boolean;
    /**
     * --backend NAME=URL[,key-env=VAR][,model=ID][,allow-remote], repeatable: remote backends workspaces and the API can use.
     * Given, they replace settings.json's list for this run (the settings screen shows them, not editable).
     */
    readonly backends: readonly BackendConfig[];
    /**
     * The local models' settings given for this run, over settings.json's (contract/modelPoolSettings.ts):
     * --models-folder DIR (repeatable; replaces the file's folders), --model-idle-seconds N, --models-memory-mb N.
     */
    readonly modelPoolFromCommandLine: Partial<ModelPoolSettings>;
}

/** Each engine setting's flag, as the settings screen names it for a value given on the command line. */
export const engineSettingFlags: Readonly<Record<EngineSettingName, string>> = {
    contextSize: "--context",
    gpu: "--gpu",
    gpuLayers: "--gpu-layers",
    threads: "--threads",
    flashAttention: "--flash-attention",
    kvCacheType: "--kv-type",
    decodeSequences: "--decode-sequences",
    pageTokens: "--page-tokens",
    poolPages: "--pool-pages",
    speculation: "--speculation",
    draftModel: "--draft-model",
    draftMaxTokens: "--draft-max",
    draftMinConfidence: "--draft-p-min"
};

/** The command line's defaults; the engine's are engineDefaults (engine/EngineConfig.ts), under the flags' names. */
export const serveDefaults = {
    host: "127.0.0.1",
    port: 8080,
    model: "tiny",
    mode: engineDefaults.mode,
    kvType: engineDefaults.kvCacheType,
    context: engineDefaults.window,
    decodeSequences: engineDefaults.numDecodeSequences,
    pageTokens: engineDefaults.pageTokens
} as const;

export const serveUsage = `Usage: npm run serve -- [options]

  --host HOST                 address to listen on (default ${serveDefaults.host}); a loopback address
                              (127.x.x.x, ::1, localhost) unless --allow-remote is given
  --allow-remote              allow a --host other machines can reach (plain HTTP: anyone on the
                              network who gets the key or a login link can read every chat)
  --port N                    port, 0 for a free one (default ${serveDefaults.port})
  --model PATH|tiny|small     a GGUF file, or a built-in generated model (default ${serveDefaults.model})
  --mode split|unified        prefill/decode split with page handoff, or one context (default ${serveDefaults.mode})
  --kv-type ${kvCacheTypes.join("|")}     the type of the K and V caches (default ${serveDefaults.kvType}); q8_0 and q4_0
                              keep a token's KV in about half and a quarter of the bytes, so the pool
                              holds more tokens, and need heads a whole number of 32 values wide
  --context TOKENS            context window per workspace (default ${serveDefaults.context})
  --threads N                 CPU threads (default: llama.cpp's choice, the machine's cores)
  --flash-attention on|off    flash attention (default on; q8_0 and q4_0 need it)
  --gpu auto|cuda|vulkan|metal|off
                              the compute backend (default auto): auto takes a GPU with a hardware
                              device, else the CPU with Kvault's own build; a named one is used whatever
                              its device (a software one, such as llvmpipe, only when named) or refused;
                              off is the CPU alone. What runs is shown in /health and /v1/models
  --gpu-layers N|auto|off     N layers on --gpu's backend (0 to the model's layers plus its output
                              layer), the rest on the CPU, e.g. --gpu vulkan --gpu-layers 20; auto (the
                              default): all that fit; off: as --gpu off. Without a GPU every layer stays
                              on the CPU, whatever N
  --prefill-capacity TOKENS   tokens of the prefill context (default: the window)
  --decode-sequences N        workspaces decoding at once; more are swapped to pages (default ${serveDefaults.decodeSequences})
  --page-tokens N             token positions per KV page (default ${serveDefaults.pageTokens})
  --pool-pages N              pages in the host pool (default: the window for every decode sequence, plus one)
  --api-key KEY               API key (default: $KVAULT_API_KEY, else a new key printed at start)
  --extra-api-key ID=KEY      one more API key, for the OpenAI API only, whose clients get workspace
                              names of their own: another key's "user" never reaches theirs (repeatable)
  --cors-origin URL           let pages of this origin (http(s)://host[:port]) call the API from a browser;
                              every other origin stays refused (repeatable; default: none)
  --log-prompts               the request log (one line per API request on stderr) shows each prompt's
                              text too; without it a line never holds what was asked
  --data-dir DIR              where models and chats live (default ~/.kvault)
  --models-folder DIR         a folder of GGUF files the API serves in place by their names, beside the
                              models found in LM Studio's, Ollama's and Hugging Face's folders (repeatable;
                              replaces settings.json's modelsFolders for this run)
  --model-idle-seconds N      unload a model that a request's "model" loaded after N seconds without a
                              request (default: settings.json's modelIdleSeconds, else
                              ${modelPoolSettingDefaults.modelIdleSeconds}, as Ollama's keep_alive)
  --models-memory-mb N        the memory every loaded model's plan together may take (weights, KV, page
                              pool, compute), in MiB (default: settings.json's modelsMemoryMb, else the
                              machine's RAM); the least recently used idle model is unloaded to make room,
                              else the load is refused with the plan
  --download-stall-seconds N  stop a download that gains no byte for N seconds, keeping it to resume (default 60)
  --handoff-demo MS           demo mode: each handoff step waits MS milliseconds (up to 5000), so the page
                              map shows pages go prefill → host → decode (default 0: off)
  --stream-demo MS            demo mode: each generated token waits MS milliseconds (up to 1000) before
                              the next, so a model too small to watch streams at reading pace (default 0: off)
  --speculation off|input-lookup
                              speculative decoding off, or drafting from the chat's own tokens (default off)
  --draft-model PATH          speculative decoding with a draft model: a GGUF with the model's tokenizer
                              (a smaller or more quantized model of its family) drafts, the model verifies
  --draft-max N               a draft model's most tokens drafted ahead of one step, 1 to 64 (default 16)
  --draft-p-min P             a token the draft model gives less than P (0 to 1) ends its draft (default 0.6)
  --backend NAME=URL[,key-env=VAR][,model=ID][,allow-remote]
                              a remote OpenAI-compatible server (vLLM, SGLang, llama-server, Ollama,
                              another Kvault) that workspaces can run on and Kvault's API lists as
                              NAME/<model id> (repeatable). URL is its base URL, e.g.
                              http://127.0.0.1:8000/v1 (/v1 is added to a URL without a path);
                              key-env names the variable that holds its key; model offers that model
                              only. A URL beyond loopback needs allow-remote, and is warned about.
                              Given, these replace the settings screen's backends for this run

Engine settings not given here (--context, --threads, --flash-attention, --gpu, --gpu-layers, --kv-type,
--decode-sequences, --page-tokens, --pool-pages, --speculation or --draft-model, --draft-max, --draft-p-min) come from DIR/settings.json, which the settings
screen keeps; one given here overrides it for this run, and the screen shows it as not editable.
`;

/** Flags that take no value. */
const SWITCHES = new Set(["allow-remote", "log-prompts"]);

/** Flags that may be given more than once; each value is kept, in order. */
const REPEATABLE = new Set(["extra-api-key", "backend", "cors-origin", "models-folder"]);

const FLAGS = new Set([
    "host",
    "port",
    "model",
    "mode",
    "kv-type",
    "context",
    "threads",
    "flash-attention",
    "gpu",
    "gpu-layers",
    "prefill-capacity",
    "decode-sequences",
    "page-tokens",
    "pool-pages",
    "api-key",
    "extra-api-key",
    "cors-origin",
    "data-dir",
    "download-stall-seconds",
    "handoff-demo",
    "stream-demo",
    "speculation",
    "draft-model",
    "draft-max",
    "draft-p-min",
    "backend",
    "models-folder",
    "model-idle-seconds",
    "models-memory-mb"
]);

/** Parses `npm run serve` arguments; every mistake is a `ServeOptionsError` that says which flag and why. */
export function parseServeOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): ServeOptions {
    const given = new Map<string, string>();
    const repeated = new Map<string, string[]>();
    for (let index = 0; index < argv.length; index++) {
        const argument = argv[index]!;
        const match = /^--([a-z-]+)(?:=(.*))?$/.exec(argument);
        if (match !== null && SWITCHES.has(match[1]!)) {
            if (match[2] !== undefined) {
                throw new ServeOptionsError(`--${match[1]} takes no value; give it alone.`);
            }
            given.set(match[1]!, "");
            continue;
        }
        if (match === null || !FLAGS.has(match[1]!)) {
            throw new ServeOptionsError(`Unknown option "${argument}".\n\n${serveUsage}`);
        }
        const value = match[2] ?? argv[++index];
        if (value === undefined || (match[2] === undefined && value.startsWith("--"))) {
            throw new ServeOptionsError(`--${match[1]} needs a value.`);
        }
        if (REPEATABLE.has(match[1]!)) {
            repeated.set(match[1]!, [...(repeated.get(match[1]!) ?? []), value]);
            continue;
        }
        if (given.has(match[1]!)) {
            throw new ServeOptionsError(`--${match[1]} is given twice.`);
        }
        given.set(match[1]!, value);
    }

    const { modelIdleSeconds: idleLimits, modelsMemoryMb: memoryLimits } = modelPoolSettingLimits;
    const integer = (flag: string, fallback: number, min: number, max: number): number => {
        const text = given.get(flag);
        if (text === undefined) {
            return fallback;
        }
        const value = Number(text);
        if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
            throw new ServeOptionsError(
                `--${flag} is "${text}"; it must be a whole number from ${min.toLocaleString("en-US")} to ${max.toLocaleString("en-US")}.`
            );
        }
        return value;
    };

    const mode = given.get("mode") ?? serveDefaults.mode;
    if (mode !== "split" && mode !== "unified") {
        throw new ServeOptionsError(`--mode is "${mode}"; use "split" or "unified".`);
    }
    const kvType = given.get("kv-type") ?? serveDefaults.kvType;
    if (!isKvCacheType(kvType)) {
        throw new ServeOptionsError(`--kv-type is "${kvType}"; use one of ${kvCacheTypes.join(", ")}.`);
    }
    const modelText = given.get("model") ?? serveDefaults.model;
    const model: ServeOptions["model"] =
        modelText === "tiny" || modelText === "small"
            ? { kind: "preset", preset: modelText }
            : { kind: "file", path: path.resolve(modelText) };

    const context = integer("context", serveDefaults.context, 16, 1 << 22);
    const decodeSequences = integer("decode-sequences", serveDefaults.decodeSequences, 1, 256);
    const pageTokens = integer("page-tokens", serveDefaults.pageTokens, 1, 65_536);
    const pagesPerWindow = Math.ceil(context / pageTokens);
    const apiKey = given.get("api-key") ?? env.KVAULT_API_KEY;
    if (apiKey !== undefined && !/^[A-Za-z0-9_.-]{8,200}$/.test(apiKey)) {
        throw new ServeOptionsError("The API key must be 8 to 200 characters of letters, digits, '_', '.' or '-'.");
    }
    const extraApiKeys = (repeated.get("extra-api-key") ?? []).map((text) => {
        const entry = /^([A-Za-z0-9_-]{1,40})=([A-Za-z0-9_.-]{8,200})$/.exec(text);
        if (entry === null) {
            throw new ServeOptionsError(
                `--extra-api-key "${text.slice(0, 60)}" is not ID=KEY: the id 1 to 40 letters, digits, '_' or '-'; the key 8 to 200 of those or '.'.`
            );
        }
        return { id: entry[1]!, key: entry[2]! };
    });
    for (const [index, { id, key }] of extraApiKeys.entries()) {
        const earlier = extraApiKeys.slice(0, index);
        if (earlier.some((other) => other.id === id)) {
            throw new ServeOptionsError(`--extra-api-key: the id "${id}" is given twice; give each key its own id.`);
        }
        if (key === apiKey || earlier.some((other) => other.key === key)) {
            throw new ServeOptionsError(`--extra-api-key: the key for "${id}" is the same as another key; give each its own.`);
        }
    }
    const flashAttention = given.get("flash-attention");
    if (flashAttention !== undefined && flashAttention !== "on" && flashAttention !== "off") {
        throw new ServeOptionsError(`--flash-attention is "${flashAttention}"; use "on" or "off".`);
    }
    const gpu = gpuOptions(given.get("gpu"), given.get("gpu-layers"));
    const poolPages = integer("pool-pages", pagesPerWindow * (decodeSequences + 1), 1, 4_194_304);
    const speculation = speculationOption(given, integer);
    const fromCommandLine: Partial<Record<EngineSettingName, unknown>> = {
        contextSize: given.has("context") ? context : undefined,
        ...gpu,
        threads: given.has("threads") ? integer("threads", 0, 1, 1_024) : undefined,
        flashAttention: flashAttention === undefined ? undefined : flashAttention === "on",
        kvCacheType: given.has("kv-type") ? kvType : undefined,
        decodeSequences: given.has("decode-sequences") ? decodeSequences : undefined,
        pageTokens: given.has("page-tokens") ? pageTokens : undefined,
        poolPages: given.has("pool-pages") ? poolPages : undefined,
        ...speculation
    };
    const backends = (repeated.get("backend") ?? []).map((text) => {
        try {
            return parseBackendOption(text, env);
        } catch (error) {
            throw new ServeOptionsError((error as Error).message);
        }
    });
    const twice = repeatedBackendName(backends);
    if (twice !== undefined) {
        throw new ServeOptionsError(`--backend: the name "${twice}" is given twice; give each backend its own name.`);
    }
    const corsOrigins = (repeated.get("cors-origin") ?? []).map((text) => {
        const origin = normalizeOrigin(text);
        if (origin === undefined) {
            throw new ServeOptionsError(
                `--cors-origin "${text.slice(0, 100)}" is not an origin: give http:// or https://, a host and maybe a port, and nothing after (no path).`
            );
        }
        return origin;
    });
    const host = given.get("host") ?? serveDefaults.host;
    const allowRemote = given.has("allow-remote");
    if (!allowRemote && !isLoopbackHost(host)) {
        throw new ServeOptionsError(
            `--host ${host} is not a loopback address: other machines could reach Kvault's UI and API, over plain HTTP. ` +
                "Use 127.0.0.1 or ::1, or add --allow-remote if that is what you want."
        );
    }
    return {
        host,
        allowRemote,
        port: integer("port", serveDefaults.port, 0, 65_535),
        model,
        mode,
        kvType,
        context,
        prefillCapacity: integer("prefill-capacity", context, 16, 1 << 22),
        decodeSequences,
        pageTokens,
        poolPages,
        apiKey: apiKey === "" ? undefined : apiKey,
        extraApiKeys,
        corsOrigins,
        logPrompts: given.has("log-prompts"),
        dataDir: path.resolve(given.get("data-dir") ?? path.join(os.homedir(), ".kvault")),
        downloadStallSeconds: given.has("download-stall-seconds") ? integer("download-stall-seconds", 0, 1, 3600) : undefined,
        modelPoolFromCommandLine: {
            ...(repeated.has("models-folder")
                ? { modelsFolders: (repeated.get("models-folder") ?? []).map((folder) => path.resolve(folder)) }
                : {}),
            ...(given.has("model-idle-seconds")
                ? { modelIdleSeconds: integer("model-idle-seconds", 0, idleLimits.min, idleLimits.max) }
                : {}),
            ...(given.has("models-memory-mb") ? { modelsMemoryMb: integer("models-memory-mb", 0, memoryLimits.min, memoryLimits.max) } : {})
        },
        handoffDemoMs: integer("handoff-demo", 0, 0, 5_000),
        streamDemoMs: integer("stream-demo", 0, 0, 1_000),
        engineFromCommandLine: Object.fromEntries(Object.entries(fromCommandLine).filter(([, value]) => value !== undefined)),
        engineFlags: {
            ...engineSettingFlags,
            ...(given.get("gpu-layers") === "off" ? { gpu: "--gpu-layers" } : {}),
            ...(given.has("draft-model") ? { speculation: "--draft-model" } : {})
        },
        modelGiven: given.has("model"),
        prefillCapacityGiven: given.has("prefill-capacity"),
        backends
    };
}

/**
 * --speculation off|input-lookup, or --draft-model PATH (speculation "draft-model" with that
 * model), and --draft-max and --draft-p-min: the engine settings they give.
 */
function speculationOption(
    given: ReadonlyMap<string, string>,
    integer: (flag: string, fallback: number, min: number, max: number) => number
): Partial<Pick<EngineSettings, "speculation" | "draftModel" | "draftMaxTokens" | "draftMinConfidence">> {
    const speculation = given.get("speculation");
    const draftModel = given.get("draft-model");
    if (speculation !== undefined && speculation !== "off" && speculation !== "input-lookup") {
        throw new ServeOptionsError(
            `--speculation is "${speculation.slice(0, 40)}"; use "off" or "input-lookup", or give --draft-model PATH for a draft model.`
        );
    }
    if (speculation !== undefined && draftModel !== undefined) {
        throw new ServeOptionsError(`--speculation ${speculation} and --draft-model are both given; give one.`);
    }
    const pMin = given.get("draft-p-min");
    const minConfidence = pMin === undefined ? undefined : Number(pMin);
    if (pMin !== undefined && (!/^(0|1|0?\.\d+|1\.0*)$/.test(pMin) || !isDraftConfidence(minConfidence))) {
        throw new ServeOptionsError(`--draft-p-min is "${pMin.slice(0, 40)}"; it must be a probability from 0 to 1, such as 0.6.`);
    }
    const { min, max } = engineSettingLimits.draftMaxTokens;
    return {
        ...(draftModel === undefined ? {} : { speculation: "draft-model" as const, draftModel: path.resolve(draftModel) }),
        ...(speculation === undefined ? {} : { speculation }),
        ...(given.has("draft-max") ? { draftMaxTokens: integer("draft-max", 0, min, max) } : {}),
        ...(minConfidence === undefined ? {} : { draftMinConfidence: minConfidence })
    };
}

/**
 * The backend from --gpu auto|cuda|vulkan|metal|off and the layers on it from --gpu-layers N|auto
 * (off: the CPU alone, as --gpu off); either alone leaves the other to the settings file. N is
 * bounded here by the settings' limit; the model's own layer count is checked when it loads (engine/runtime).
 */
function gpuOptions(gpu: string | undefined, gpuLayers: string | undefined): Partial<Pick<EngineSettings, "gpu" | "gpuLayers">> {
    if (gpu !== undefined && !isGpuBackendSetting(gpu)) {
        throw new ServeOptionsError(
            `--gpu is "${gpu.slice(0, 40)}"; use auto, cuda, vulkan, metal or off. For a number of layers on the GPU, add --gpu-layers N.`
        );
    }
    if (gpuLayers === "off") {
        if (gpu !== undefined && gpu !== "off") {
            throw new ServeOptionsError(
                `--gpu ${gpu} and --gpu-layers off disagree: give --gpu-layers 0 to keep every layer on the CPU with ${gpu}, or --gpu off.`
            );
        }
        return { gpu: "off" };
    }
    if (gpuLayers === undefined || gpuLayers === "auto") {
        return { gpu, gpuLayers };
    }
    const { min, max } = engineSettingLimits.gpuLayers;
    const value = Number(gpuLayers);
    if (!/^\d+$/.test(gpuLayers) || value > max) {
        throw new ServeOptionsError(
            `--gpu-layers is "${gpuLayers.slice(0, 40)}"; give a whole number of layers from ${min} to ${max.toLocaleString("en-US")} (at most the model's layers plus its output layer), "auto" or "off".`
        );
    }
    return { gpu, gpuLayers: value };
}

/** Whether `host` is reachable from this machine only: localhost, 127.0.0.0/8, ::1 (also IPv4-mapped, ::ffff:127.0.0.1). */
export function isLoopbackHost(host: string): boolean {
    if (host.toLowerCase() === "localhost") {
        return true;
    }
    if (net.isIPv4(host)) {
        return host.split(".")[0] === "127";
    }
    if (!net.isIPv6(host)) {
        return false;
    }
    const canonical = new URL(`http://[${host}]/`).hostname; // "[::1]", "[::ffff:7f00:1]"
    const mapped = /^\[::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}\]$/.exec(canonical);
    return canonical === "[::1]" || (mapped !== null && parseInt(mapped[1]!, 16) >> 8 === 127);
}

/** What serve prints on stderr when --allow-remote lets it listen beyond loopback. */
export function remoteListeningWarning(host: string): string {
    return (
        `Warning: --allow-remote: Kvault listens on ${host}, which other machines may reach. It speaks plain HTTP (no TLS): ` +
        "anyone on the network who sees the API key or a login link can read and write every chat. Prefer 127.0.0.1 with an SSH tunnel."
    );
}
