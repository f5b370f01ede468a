// Model inspection as the hosts do it: in a process of its own, with a memory limit and a
// deadline, so that no model file (a download from any web server, a path typed in the model
// panel) can end or pin the host. inspectModelFile runs there; here, every way that process can
// end becomes a fact, a typed refusal, or model_unreadable saying what happened.
import type { ModelFacts } from "../../contract/models.js";
import { InspectionStartTimeoutError, ModelNotGgufError, ModelUnreadableError, ModelUnsupportedError } from "./modelErrors.js";
import { forkInspectionSpawner, INSPECT_REQUEST_ENV, type InspectionRequest, type InspectionSpawner } from "./inspectionProcess.js";

export interface InspectionLimits {
    /** From the process's start to its "ready"; past it the process is killed. Loading its code is slow on a loaded machine. */
    readonly startupMs: number;
    /** From "ready" to answer; past it the process is killed. A header takes well under a second to read. */
    readonly deadlineMs: number;
    /** The V8 heap of the inspection process (--max-old-space-size), in MiB. */
    readonly maxHeapMb: number;
    /** Its resident memory, native buffers included. */
    readonly maxRssBytes: number;
    /** Inspections run at once; more wait their turn. */
    readonly maxConcurrent: number;
}

/** Defaults in one place. The largest real headers (260k-token vocabularies) need about 200 MB to inspect. */
export const inspectionLimits: InspectionLimits = {
    startupMs: 120_000,
    deadlineMs: 20_000,
    maxHeapMb: 512,
    maxRssBytes: 1024 * 1024 * 1024,
    maxConcurrent: 2
};

export interface ChildInspectorOptions {
    /** How the process is started; child_process.fork of inspectModelProcessMain by default. */
    readonly spawn?: InspectionSpawner;
    readonly limits?: Partial<InspectionLimits>;
}

export type ModelInspector = (
    modelPath: string,
    estimateFor: { readonly contextSize: number; readonly sequences: number }
) => Promise<ModelFacts>;

const mib = (bytes: number): string => `${Math.round(bytes / (1024 * 1024)).toLocaleString("en-US")} MB`;

/**
 * An inspector that reads each file in a child process: the facts, or model_unreadable,
 * model_not_gguf or model_unsupported, whatever the file does to the child. At most
 * `maxConcurrent` children at once.
 */
export function childInspector(options: ChildInspectorOptions = {}): ModelInspector {
    const limits = { ...inspectionLimits, ...options.limits };
    const spawn = options.spawn ?? forkInspectionSpawner();
    let running = 0;
    const waiting: (() => void)[] = [];
    return async (modelPath, estimateFor) => {
        if (running >= limits.maxConcurrent) {
            await new Promise<void>((resolve) => waiting.push(resolve));
        }
        running++;
        try {
            return await inspectOnce(spawn, limits, modelPath, estimateFor);
        } finally {
            running--;
            waiting.shift()?.();
        }
    };
}

let defaultInspector: ModelInspector | undefined;

/** The headless default: one forked child per inspection, with inspectionLimits. */
export function inspectModelInChild(
    modelPath: string,
    estimateFor: { readonly contextSize: number; readonly sequences: number }
): Promise<ModelFacts> {
    defaultInspector ??= childInspector();
    return defaultInspector(modelPath, estimateFor);
}

function inspectOnce(
    spawn: InspectionSpawner,
    limits: InspectionLimits,
    modelPath: string,
    estimateFor: { readonly contextSize: number; readonly sequences: number }
): Promise<ModelFacts> {
    const request: InspectionRequest = { path: modelPath, ...estimateFor, maxRssBytes: limits.maxRssBytes };
    return new Promise((resolve, reject) => {
        let settled = false;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const settle = (outcome: () => void): void => {
            if (!settled) {
                settled = true;
                clearTimeout(timer);
                outcome();
            }
        };
        const child = spawn({
            env: { [INSPECT_REQUEST_ENV]: JSON.stringify(request) },
            execArgv: [`--max-old-space-size=${limits.maxHeapMb}`]
        });
        const stopAfter = (ms: number, refusal: () => ModelUnreadableError): void => {
            clearTimeout(timer);
            timer = setTimeout(() => {
                settle(() => reject(refusal()));
                child.kill();
            }, ms);
        };
        // Until it is ready the child is loading its own code, which says nothing about the file.
        stopAfter(limits.startupMs, () => new InspectionStartTimeoutError(modelPath, limits.startupMs));
        child.onMessage((message) => {
            if (isReady(message)) {
                stopAfter(
                    limits.deadlineMs,
                    () =>
                        new ModelUnreadableError(
                            `Reading the header of ${modelPath} took more than ${seconds(limits.deadlineMs)} s, so Kvault stopped it: ` +
                                "a model's header takes well under a second, so the file is probably damaged or crafted (or its disk is very slow). It was not loaded."
                        )
                );
                return;
            }
            settle(() => {
                try {
                    resolve(readAnswer(modelPath, message));
                } catch (error) {
                    reject(error as Error);
                }
            });
            child.kill(); // it has nothing left to say
        });
        child.onExit((code, signal) => {
            settle(() => reject(diedWithoutAnswer(modelPath, code, signal, child.recentOutput())));
        });
    });
}

const seconds = (ms: number): string => (ms / 1000).toLocaleString("en-US");

function isReady(message: unknown): boolean {
    return typeof message === "object" && message !== null && (message as { type?: unknown }).type === "ready";
}

/** The child's one message: facts (rebuilt field by field), or its refusal as the same typed error. */
function readAnswer(modelPath: string, message: unknown): ModelFacts {
    const answer = (typeof message === "object" && message !== null ? message : {}) as Record<string, unknown>;
    if (answer.type === "facts" && typeof answer.facts === "object" && answer.facts !== null) {
        return rebuildFacts(answer.facts as ModelFacts);
    }
    if (answer.type === "refused" && typeof answer.message === "string") {
        switch (answer.code) {
            case "model_not_gguf":
                throw new ModelNotGgufError(answer.message);
            case "model_unsupported":
                throw new ModelUnsupportedError(answer.message);
            case "model_unreadable":
                throw new ModelUnreadableError(answer.message);
            default:
                throw new ModelUnreadableError(`Kvault could not inspect ${modelPath}: ${answer.message}`);
        }
    }
    if (answer.type === "overMemory" && typeof answer.bytes === "number" && typeof answer.limitBytes === "number") {
        const what = answer.what === "heap" ? "JavaScript heap" : "memory";
        throw new ModelUnreadableError(
            `Reading the header of ${modelPath} used ${mib(answer.bytes)} of ${what} (the limit is ${mib(answer.limitBytes)}; a model's header needs a few), ` +
                "so Kvault stopped it: the file is probably damaged or crafted. It was not loaded."
        );
    }
    throw new ModelUnreadableError(
        `Kvault could not inspect ${modelPath}: its inspection process answered ${JSON.stringify(message)?.slice(0, 200)}.`
    );
}

/** JSON drops undefined fields; the facts keep inspectModelFile's shape. */
function rebuildFacts(facts: ModelFacts): ModelFacts {
    return {
        path: facts.path,
        fileName: facts.fileName,
        fileBytes: facts.fileBytes,
        name: facts.name ?? undefined,
        architecture: facts.architecture,
        parameterCount: facts.parameterCount ?? undefined,
        fileType: facts.fileType ?? undefined,
        trainContextSize: facts.trainContextSize ?? undefined,
        numLayers: facts.numLayers,
        kvBytesPerToken: facts.kvBytesPerToken,
        // An inspector that predates the KV types (or a reader of its own) sends none: none is said.
        kvBytesPerTokenByType: {
            f16: facts.kvBytesPerTokenByType?.f16 ?? undefined,
            q8_0: facts.kvBytesPerTokenByType?.q8_0 ?? undefined,
            q4_0: facts.kvBytesPerTokenByType?.q4_0 ?? undefined
        },
        heads: facts.heads ?? undefined,
        slidingWindow: facts.slidingWindow ?? undefined,
        machineRamBytes: facts.machineRamBytes,
        memory: facts.memory,
        estimate: facts.estimate ?? undefined
    };
}

function diedWithoutAnswer(modelPath: string, code: number | null, signal: string | null, output: string): ModelUnreadableError {
    const how = signal !== null ? `was ended by ${signal}` : code === null ? "could not start" : `exited with code ${code}`;
    // V8's last words say why: "Fatal JavaScript invalid size error", "Reached heap limit", ...
    const fatal = output
        .split("\n")
        .map((line) => line.trim())
        .find((line) => /fatal|heap limit|out of memory/i.test(line));
    return new ModelUnreadableError(
        `Reading the header of ${modelPath} ended the process that inspects model files (it ${how}${fatal !== undefined ? `: "${fatal.slice(0, 200)}"` : ""}) ` +
            "before it answered: the file is probably damaged or crafted. It was not loaded; Kvault is unaffected."
    );
}
