import type { EngineInfo } from "../../contract/engineProtocol.js";
import type { EngineUnavailableError } from "./engineHostErrors.js";

/** What EngineSupervisor tells its listeners. */
export interface EngineSupervisorEvents {
    /** The engine process ended on its own; `numInterrupted` turns and calls were rejected with engine_crashed. */
    crashed: {
        readonly pid: number | undefined;
        readonly exitCode: number | null;
        readonly signal: NodeJS.Signals | null;
        readonly numInterrupted: number;
        readonly willRestart: boolean;
    };
    /** A new engine process is ready; calls go to it. */
    restarted: { readonly pid: number | undefined; readonly info: EngineInfo; readonly numRestarts: number };
    /** The restart budget is spent: every call fails with `error` until the host is restarted. */
    down: { readonly error: EngineUnavailableError };
    /**
     * switchModel started an engine process on another model (`cause` "model"; `numEnded` turns were
     * ended with model_switched, and the calls in flight with them), or reconfigure on the same one
     * with other settings ("settings"; ended with its restart's error, engine_settings_changed).
     */
    switched: {
        readonly pid: number | undefined;
        readonly info: EngineInfo;
        readonly numEnded: number;
        readonly cause: "model" | "settings";
    };
}

export type SupervisorListener<K extends keyof EngineSupervisorEvents> = (event: EngineSupervisorEvents[K]) => void;

/** The supervisor's listeners by event; one that throws is logged and never stops supervision or the other listeners. */
export class SupervisorEvents {
    readonly #listeners: { [K in keyof EngineSupervisorEvents]: Set<SupervisorListener<K>> } = {
        crashed: new Set(),
        restarted: new Set(),
        down: new Set(),
        switched: new Set()
    };

    constructor(private readonly log: (line: string) => void) {}

    on<K extends keyof EngineSupervisorEvents>(event: K, listener: SupervisorListener<K>): () => void {
        const listeners = this.#listeners[event] as Set<SupervisorListener<K>>;
        listeners.add(listener);
        return () => listeners.delete(listener);
    }

    emit<K extends keyof EngineSupervisorEvents>(event: K, payload: EngineSupervisorEvents[K]): void {
        for (const listener of [...(this.#listeners[event] as Set<SupervisorListener<K>>)]) {
            try {
                listener(payload);
            } catch (error) {
                this.log(`a "${event}" listener threw: ${(error as Error).message}`);
            }
        }
    }
}
