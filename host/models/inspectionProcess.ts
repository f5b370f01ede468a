// The process a model file is inspected in (inspectModelInChild.ts), and how the headless host
// starts it: child_process.fork. The desktop app starts it as an Electron utilityProcess instead
// (main/engine/utilityInspectionSpawner.ts); both hand inspectModelInChild an InspectionChild.
import { fork } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The environment variable that carries the request (JSON) to the inspection process. */
export const INSPECT_REQUEST_ENV = "KVAULT_INSPECT_REQUEST";

export interface InspectionRequest {
    readonly path: string;
    readonly contextSize: number;
    readonly sequences: number;
    /** Resident memory past which the process stops itself and says so. */
    readonly maxRssBytes: number;
}

/**
 * What the inspection process posts: "ready" once its code is loaded and it is about to read the
 * file (the read deadline starts there), then one answer before it exits.
 */
export type InspectionAnswer =
    | { readonly type: "ready" }
    | { readonly type: "facts"; readonly facts: unknown }
    | { readonly type: "refused"; readonly code: string; readonly message: string }
    | { readonly type: "overMemory"; readonly what: "heap" | "rss"; readonly bytes: number; readonly limitBytes: number };

/** A started inspection process, as inspectModelInChild drives it. */
export interface InspectionChild {
    onMessage(listener: (message: unknown) => void): void;
    /** Once, when the process has ended (its stderr drained where the platform allows). */
    onExit(listener: (code: number | null, signal: string | null) => void): void;
    /** Ends it now; nothing it says afterwards counts. */
    kill(): void;
    /** The end of its stderr, to quote when it dies without answering. */
    recentOutput(): string;
}

export interface InspectionLaunch {
    /** Added to the host's environment. */
    readonly env: Readonly<Record<string, string>>;
    /** Node flags: the heap limit. */
    readonly execArgv: readonly string[];
}

export type InspectionSpawner = (launch: InspectionLaunch) => InspectionChild;

/** How much of the process's stderr is kept. */
export const RECENT_OUTPUT_CHARS = 4_000;

/** The headless host's spawner: child_process.fork of the entry, TypeScript through tsx when run from sources. */
export function forkInspectionSpawner(entry: string = defaultInspectionEntry()): InspectionSpawner {
    return ({ env, execArgv }) => {
        const child = fork(entry, [], {
            execArgv: [...execArgv, ...(entry.endsWith(".ts") ? ["--import", tsxLoaderUrl()] : [])],
            env: { ...process.env, ...env },
            serialization: "json",
            stdio: ["ignore", "ignore", "pipe", "ipc"]
        });
        let recent = "";
        child.stderr?.setEncoding("utf8");
        child.stderr?.on("data", (chunk: string) => {
            recent = (recent + chunk).slice(-RECENT_OUTPUT_CHARS);
        });
        const exitListeners: ((code: number | null, signal: string | null) => void)[] = [];
        let exited = false;
        const exit = (code: number | null, signal: string | null): void => {
            if (!exited) {
                exited = true;
                exitListeners.forEach((listener) => listener(code, signal));
            }
        };
        // 'close' comes after stderr has drained; a failed spawn is an 'error' with no 'close' to follow.
        child.on("close", (code, signal) => exit(code, signal));
        child.on("error", (error) => {
            recent = (recent + `\n${error.message}`).slice(-RECENT_OUTPUT_CHARS);
            if (child.pid === undefined) {
                exit(null, null);
            }
        });
        return {
            onMessage: (listener) => void child.on("message", listener),
            onExit: (listener) => void exitListeners.push(listener),
            kill: () => {
                if (!exited) {
                    child.kill("SIGKILL");
                }
            },
            recentOutput: () => recent
        };
    };
}

/** From sources (tsx, vitest) the entry is the TypeScript file; electron-vite emits it as out/main/inspectModelProcess.js. */
export function defaultInspectionEntry(): string {
    return import.meta.url.endsWith(".ts")
        ? fileURLToPath(new URL("./inspectModelProcessMain.ts", import.meta.url))
        : fileURLToPath(new URL("./inspectModelProcess.js", import.meta.url));
}

function tsxLoaderUrl(): string {
    return pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
}
