import { fork, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { EngineCommand } from "../../contract/engineProtocol.js";
import { ENGINE_CONFIG_ENV } from "../../engine/index.js";
import type { EngineConfigInput } from "../../engine/index.js";
import type { EngineChildProcess, EngineProcessSpawner } from "./EngineProcessSpawner.js";

export interface ForkEngineOptions {
    /** The engine process's entry; by default engineProcessMain.ts beside these sources, or engineProcess.js beside the bundle. */
    readonly entry?: string;
    /** Node flags for the child; by default tsx's loader when the entry is TypeScript. */
    readonly execArgv?: readonly string[];
    readonly env?: Readonly<Record<string, string | undefined>>;
    /** Where the child's stderr lines go; the host's stderr by default. */
    readonly onStderr?: (chunk: string) => void;
}

/** How much of the child's stderr is kept to quote in an error. */
const RECENT_OUTPUT_CHARS = 4_000;

/** The headless host's spawner: `child_process.fork` over a JSON IPC channel. */
export function forkEngineSpawner(options: ForkEngineOptions = {}): EngineProcessSpawner {
    return { spawnEngineProcess: (config) => forkEngineProcess(config, options) };
}

export function forkEngineProcess(config: EngineConfigInput, options: ForkEngineOptions = {}): EngineChildProcess {
    const entry = options.entry ?? defaultEntry();
    const child = fork(entry, [], {
        execArgv: [...(options.execArgv ?? (entry.endsWith(".ts") ? ["--import", tsxLoaderUrl()] : []))],
        env: { ...process.env, ...options.env, [ENGINE_CONFIG_ENV]: JSON.stringify(config) },
        // JSON: the protocol is plain data (contract/engineProtocol.ts), the subset both this
        // channel and a utilityProcess's structured clone carry unchanged.
        serialization: "json",
        stdio: ["ignore", "inherit", "pipe", "ipc"]
    });
    return new ForkedEngineProcess(child, options.onStderr ?? ((chunk) => process.stderr.write(chunk)));
}

class ForkedEngineProcess implements EngineChildProcess {
    readonly #exitListeners: ((code: number | null, signal: NodeJS.Signals | null) => void)[] = [];
    #exited = false;
    #recent = "";

    constructor(
        private readonly child: ChildProcess,
        private readonly onStderr: (chunk: string) => void
    ) {
        child.stderr?.setEncoding("utf8");
        child.stderr?.on("data", (chunk: string) => {
            this.#recent = (this.#recent + chunk).slice(-RECENT_OUTPUT_CHARS);
            onStderr(chunk);
        });
        // 'close', not 'exit': it comes after stderr has drained, so recentOutput() holds the last words.
        child.on("close", (code, signal) => this.#exit(code, signal));
        child.on("error", (error) => {
            // A failed spawn or kill (a send's failure goes to its callback). Unheard, an 'error'
            // event would throw in the host.
            onStderr(`[kvault host] engine process ${child.pid ?? "(not started)"}: ${error.message}\n`);
            if (child.pid === undefined) {
                this.#exit(null, null);
            }
        });
    }

    get pid(): number | undefined {
        return this.child.pid;
    }

    send(command: EngineCommand): void {
        if (!this.child.connected) {
            return;
        }
        try {
            this.child.send(command, undefined, {}, () => undefined);
        } catch (error) {
            this.onStderr(`[kvault host] could not send a ${command.type} command: ${(error as Error).message}\n`);
        }
    }

    on(event: "message", listener: (message: unknown) => void): void;
    on(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
    on(
        event: "message" | "exit",
        listener: ((message: unknown) => void) | ((code: number | null, signal: NodeJS.Signals | null) => void)
    ): void {
        if (event === "message") {
            this.child.on("message", listener as (message: unknown) => void);
        } else {
            this.#exitListeners.push(listener as (code: number | null, signal: NodeJS.Signals | null) => void);
        }
    }

    kill(signal: NodeJS.Signals = "SIGTERM"): void {
        if (!this.#exited) {
            this.child.kill(signal);
        }
    }

    recentOutput(): string {
        return this.#recent;
    }

    #exit(code: number | null, signal: NodeJS.Signals | null): void {
        if (this.#exited) {
            return;
        }
        this.#exited = true;
        for (const listener of this.#exitListeners) {
            listener(code, signal);
        }
    }
}

/** From sources (tsx, vitest) the entry is the TypeScript file; electron-vite emits it as out/main/engineProcess.js. */
function defaultEntry(): string {
    return import.meta.url.endsWith(".ts")
        ? fileURLToPath(new URL("../../engine/process/engineProcessMain.ts", import.meta.url))
        : fileURLToPath(new URL("./engineProcess.js", import.meta.url));
}

/** tsx's loader by absolute URL, so the child does not depend on its working directory. */
function tsxLoaderUrl(): string {
    return pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
}
