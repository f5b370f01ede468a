import type { EngineCommand } from "../../contract/engineProtocol.js";
import type { EngineConfigInput } from "../../engine/index.js";

/**
 * One engine process as the supervisor sees it: what `child_process.fork` gives in headless mode
 * and an adapter over Electron's `UtilityProcess` gives in the app (postMessage → send; its
 * 'exit' has a code and no signal).
 */
export interface EngineChildProcess {
    /** Undefined until the OS has started the process (and for good when it could not). */
    readonly pid: number | undefined;
    /** Never throws: a command to a dead process is dropped, and its end arrives through "exit". */
    send(command: EngineCommand): void;
    on(event: "message", listener: (message: unknown) => void): void;
    /** Called exactly once, after the process has ended (or could not start: both null). */
    on(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
    kill(signal?: NodeJS.Signals): void;
    /** The end of what the process wrote to stderr, to quote when it dies before it is ready. */
    recentOutput?(): string;
}

/** Starts engine processes; injected so Electron main can use utilityProcess and tests can intercept. */
export interface EngineProcessSpawner {
    spawnEngineProcess(config: EngineConfigInput): EngineChildProcess;
}
