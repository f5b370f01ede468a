// Pure on purpose (no electron at runtime): adapts an Electron UtilityProcess to the
// EngineChildProcess the supervisor drives, so the adapter is unit-tested with a fake child.
// main/engine/utilityProcessSpawner.ts hands it the real utilityProcess.fork.
import type { EngineCommand } from "../../contract/engineProtocol.js";
import { ENGINE_CONFIG_ENV } from "../../engine/index.js";
import type { EngineConfigInput } from "../../engine/index.js";
import type { EngineChildProcess, EngineProcessSpawner } from "../../host/supervisor/EngineProcessSpawner.js";

/** The part of Electron's UtilityProcess the adapter uses; the real one is assignable to it. */
export interface UtilityChild {
    /** Undefined until the process has spawned. */
    readonly pid: number | undefined;
    readonly stdout: NodeJS.ReadableStream | null;
    readonly stderr: NodeJS.ReadableStream | null;
    postMessage(message: unknown): void;
    kill(): boolean;
    on(event: "message", listener: (message: unknown) => void): unknown;
    on(event: "exit", listener: (code: number) => void): unknown;
    on(event: "error", listener: (type: string, location: string, report: string) => void): unknown;
}

/** The options Kvault passes to utilityProcess.fork; a subset of Electron's ForkOptions. */
export interface UtilityForkOptions {
    readonly serviceName: string;
    readonly stdio: "pipe";
    readonly env: Record<string, string>;
}

export type UtilityFork = (modulePath: string, args: string[], options: UtilityForkOptions) => UtilityChild;

export interface UtilityEngineOptions {
    /** The built engine process entry: out/main/engineProcess.js. */
    readonly entry: string;
    /** The environment the engine inherits; the configuration is added to it. */
    readonly env?: Readonly<Record<string, string | undefined>>;
    /** Where the engine's output goes, chunk by chunk; the host's stderr by default. */
    readonly onOutput?: (chunk: string) => void;
    /** How long an exit waits for the output pipes to drain, so that recentOutput() holds the last words. */
    readonly drainMs?: number;
}

/** Shown in Electron's process metrics and crash reports. */
export const ENGINE_SERVICE_NAME = "Kvault engine";
/** How much of the engine's stderr is kept to quote in an error. */
const RECENT_OUTPUT_CHARS = 4_000;
const DEFAULT_DRAIN_MS = 250;

/**
 * One engine process started with utilityProcess.fork. The differences from child_process.fork
 * that the supervisor must not see: postMessage throws instead of dropping once the process is
 * gone; 'exit' has a code and no signal, and can come before the pipes are drained; an 'error'
 * event (a V8 fatal error) with no listener would throw in the main process; kill() takes no
 * signal (SIGTERM on POSIX, which Node in the engine does not catch; TerminateProcess on Windows).
 */
export class UtilityEngineProcess implements EngineChildProcess {
    readonly #exitListeners: ((code: number | null, signal: NodeJS.Signals | null) => void)[] = [];
    readonly #drained: Promise<void>;
    readonly #onOutput: (chunk: string) => void;
    #exited = false;
    #exiting = false;
    #recent = "";

    constructor(
        private readonly child: UtilityChild,
        options: Pick<UtilityEngineOptions, "onOutput" | "drainMs"> = {}
    ) {
        this.#onOutput = options.onOutput ?? ((chunk) => process.stderr.write(chunk));
        const drainMs = options.drainMs ?? DEFAULT_DRAIN_MS;
        this.#drained = Promise.all([this.#pipe(child.stdout, false), this.#pipe(child.stderr, true)]).then(() => undefined);
        child.on("error", (type, location) => {
            this.#onOutput(`[kvault host] engine process ${child.pid ?? "(not started)"}: ${type} at ${location}\n`);
        });
        child.on("exit", (code) => {
            if (this.#exiting) {
                return;
            }
            this.#exiting = true;
            void Promise.race([this.#drained, delay(drainMs)]).then(() => this.#exit(code));
        });
    }

    /** A spawner for EngineSupervisor: each engine gets its configuration through the environment, as with fork. */
    static spawner(fork: UtilityFork, options: UtilityEngineOptions): EngineProcessSpawner {
        return {
            spawnEngineProcess: (config: EngineConfigInput) =>
                new UtilityEngineProcess(
                    fork(options.entry, [], {
                        serviceName: ENGINE_SERVICE_NAME,
                        stdio: "pipe",
                        env: engineEnv(options.env ?? process.env, config)
                    }),
                    options
                )
        };
    }

    get pid(): number | undefined {
        return this.child.pid;
    }

    send(command: EngineCommand): void {
        if (this.#exiting) {
            return;
        }
        try {
            this.child.postMessage(command);
        } catch (error) {
            this.#onOutput(`[kvault host] could not send a ${command.type} command: ${(error as Error).message}\n`);
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

    /** `_signal` is not honoured: see the class comment. */
    kill(_signal?: NodeJS.Signals): void {
        if (!this.#exiting) {
            this.child.kill();
        }
    }

    recentOutput(): string {
        return this.#recent;
    }

    /** Forwards a pipe's output (and keeps stderr's tail); resolves when it ends. */
    #pipe(stream: NodeJS.ReadableStream | null, keep: boolean): Promise<void> {
        if (stream === null) {
            return Promise.resolve();
        }
        stream.setEncoding("utf8");
        stream.on("data", (chunk: string) => {
            if (keep) {
                this.#recent = (this.#recent + chunk).slice(-RECENT_OUTPUT_CHARS);
            }
            this.#onOutput(chunk);
        });
        return new Promise((resolve) => {
            stream.once("end", resolve);
            stream.once("close", resolve);
            stream.once("error", () => resolve());
        });
    }

    #exit(code: number): void {
        if (this.#exited) {
            return;
        }
        this.#exited = true;
        for (const listener of this.#exitListeners) {
            listener(code, null);
        }
    }
}

/** The host's environment without unset entries, plus the engine's configuration as JSON. */
function engineEnv(base: Readonly<Record<string, string | undefined>>, config: EngineConfigInput): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(base)) {
        if (value !== undefined) {
            env[key] = value;
        }
    }
    env[ENGINE_CONFIG_ENV] = JSON.stringify(config);
    return env;
}

function delay(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
