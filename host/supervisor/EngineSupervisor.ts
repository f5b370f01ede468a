import type { ChatTurnRequest, EngineClient, EngineInfo } from "../../contract/engineProtocol.js";
import type { ModelFacts } from "../../contract/models.js";
import { callTimeoutMs, type EngineMethod, type RpcParams, type RpcResult } from "../../contract/rpc/rpcSpec.js";
import { engineDefaults, EngineStoppedError, invariant } from "../../engine/index.js";
import type { EngineConfigInput, TurnListener, TurnResult } from "../../engine/index.js";
import { inspectModelInChild } from "../models/inspectModelInChild.js";
import { ModelSwitchedError } from "../models/modelErrors.js";
import { EngineConnection, type EngineExit } from "./EngineConnection.js";
import { describeHealth, type EngineHealth, type EngineSupervisorState } from "./EngineHealth.js";
import { CancelledBeforeSendError, EngineUnavailableError, EngineUnresponsiveError, describeExit } from "./engineHostErrors.js";
import type { EngineProcessSpawner } from "./EngineProcessSpawner.js";
import { forkEngineSpawner } from "./forkEngineProcess.js";
import { LivenessMonitor } from "./LivenessMonitor.js";
import { RestartBudget, restartPause } from "./RestartBudget.js";
import { SupervisorEvents, type EngineSupervisorEvents, type SupervisorListener } from "./SupervisorEvents.js";
import { stripUndefined, supervisorDefaults, type EngineSupervisorOptions, type ModelInspector } from "./supervisorOptions.js";

export type { EngineSupervisorEvents } from "./SupervisorEvents.js";
export { supervisorDefaults, type EngineSupervisorOptions, type ModelInspector } from "./supervisorOptions.js";
export type { EngineSupervisorState } from "./EngineHealth.js";

/** Why the engine restarts on purpose (a model switch, new settings), and the error its running turns and calls end with. */
export interface EngineRestart {
    /** For the log and `/health` while it restarts. */
    readonly reason: string;
    readonly endWith: (what: "turn" | "call") => Error;
}

interface Waiter {
    resolve(connection: EngineConnection): void;
    reject(error: Error): void;
}

/**
 * The host's handle on the engine process (docs/ARCHITECTURE.md, Processes): the same calls as an
 * in-process EngineService, over the message protocol. When the process dies, what was in flight
 * rejects with engine_crashed and a new process starts by itself, within a restart budget; calls
 * made meanwhile wait for it. The engine keeps no state a host cannot resend: hosts send the
 * whole conversation each turn, so a workspace is rebuilt from its history on its next turn.
 */
export class EngineSupervisor implements EngineClient {
    #connection: EngineConnection | undefined;
    #info: EngineInfo | undefined;
    #state: EngineSupervisorState = "running";
    #downError: EngineUnavailableError | undefined;
    /** Why the engine is restarting, for `/health`; cleared once a new one is ready. */
    #restartReason: string | undefined;
    /** Pings the running engine; replaced with each connection. */
    #liveness: LivenessMonitor | undefined;
    #numRestarts = 0;
    readonly #waiters = new Set<Waiter>();
    readonly #events: SupervisorEvents;
    readonly #budget: RestartBudget;
    readonly #restartAbort = new AbortController();
    #restarting: Promise<void> | undefined;
    #disposing: Promise<void> | undefined;
    /** The switch in progress; a second waits for it (one model change at a time). */
    #switching: Promise<unknown> = Promise.resolve();
    #config: EngineConfigInput;
    readonly #inspect: ModelInspector;
    readonly #options: Required<Omit<EngineSupervisorOptions, "spawner" | "log" | "inspectModel" | "callTimeoutsMs">>;
    readonly #callTimeoutsMs: Partial<Readonly<Record<EngineMethod, number>>>;
    readonly #spawner: EngineProcessSpawner;
    readonly #log: (line: string) => void;

    private constructor(config: EngineConfigInput, options: EngineSupervisorOptions) {
        this.#config = config;
        // Model files are untrusted: by default none is read in the host's process.
        this.#inspect = options.inspectModel ?? inspectModelInChild;
        const { spawner: _spawner, log: _log, inspectModel: _inspectModel, callTimeoutsMs = {}, ...timing } = options;
        this.#callTimeoutsMs = callTimeoutsMs;
        this.#options = { ...supervisorDefaults, ...stripUndefined(timing) };
        this.#spawner = options.spawner ?? forkEngineSpawner();
        this.#log = options.log ?? ((line) => process.stderr.write(`[kvault host] ${line}\n`));
        this.#events = new SupervisorEvents(this.#log);
        this.#budget = new RestartBudget(this.#options.maxRestarts, this.#options.restartWindowMs);
    }

    /** Starts the engine process; resolves once it is ready, rejects with EngineStartError (its reason quoted) if it is not. */
    static async start(config: EngineConfigInput, options: EngineSupervisorOptions = {}): Promise<EngineSupervisor> {
        const supervisor = new EngineSupervisor(config, options);
        supervisor.#adopt(await supervisor.#open());
        return supervisor;
    }

    /** The current engine's info; while it restarts, the last one's (a restart keeps the configuration). */
    get info(): EngineInfo {
        invariant(this.#info !== undefined, "EngineSupervisor.info read before start() resolved.");
        return this.#info;
    }

    get state(): EngineSupervisorState {
        return this.#state;
    }

    /** The running engine process's pid; undefined while it restarts or is down. */
    get pid(): number | undefined {
        return this.#connection?.pid;
    }

    /** Turns the running engine has in flight now (what a restart would end). */
    get numTurns(): number {
        return this.#connection?.numTurns ?? 0;
    }

    get numRestarts(): number {
        return this.#numRestarts;
    }

    /** What `/health` reports: whether the engine serves now, and why not when it does not. */
    health(): EngineHealth {
        return describeHealth({
            state: this.#state,
            downError: this.#downError,
            restartReason: this.#restartReason,
            pid: this.#connection?.pid,
            numTurns: this.#connection?.numTurns ?? 0,
            longestGrammarWaitMs: this.#connection?.longestGrammarWaitMs ?? 0
        });
    }

    on<K extends keyof EngineSupervisorEvents>(event: K, listener: SupervisorListener<K>): () => void {
        return this.#events.on(event, listener);
    }

    /**
     * One chat turn, as EngineService.chat; aborting `signal` cancels it in the engine. The turn was
     * checked where it entered the host (the RPC spec, or the HTTP API's parser); the engine checks
     * what only it knows.
     */
    async chat(request: ChatTurnRequest, listener?: TurnListener, signal?: AbortSignal): Promise<TurnResult> {
        const connection = await this.#whenRunning(signal);
        return connection.chat(request, listener, signal);
    }

    /**
     * One engine-served method of the RPC spec, within its deadline (rpcSpec[method].timeoutMs). Rejects
     * with the engine's own code (replay_unavailable, unknown_drill, canary_running, …), engine_timeout
     * when no answer comes in time, engine_crashed when the process dies under it.
     */
    async call<M extends EngineMethod>(method: M, params: RpcParams<M>): Promise<RpcResult<M>> {
        const timeoutMs = this.#callTimeoutsMs[method] ?? callTimeoutMs(method);
        return (await this.#whenRunning()).call(method, params, timeoutMs);
    }

    /**
     * A model file's facts and a memory estimate for this engine's decode context, without loading
     * it. Rejects with model_unreadable, model_not_gguf or model_unsupported, saying what to do.
     */
    inspectModel(modelPath: string): Promise<ModelFacts> {
        const { decodeContextSize, window, numDecodeSequences } = this.#config;
        return this.#inspect(modelPath, {
            contextSize: decodeContextSize ?? window ?? engineDefaults.window,
            sequences: numDecodeSequences ?? 1
        });
    }

    /**
     * Loads another model: the same configuration with `modelPath`. The file is inspected first,
     * and a bad one is refused (model_unreadable, model_not_gguf, model_unsupported) without
     * touching the running engine. Then running turns and calls end with model_switched, the
     * engine process stops, and one on the new model starts; calls made meanwhile wait for it.
     * If the new model does not start, the previous one is started again and this rejects with
     * why. Resolves with the new engine's info.
     */
    switchModel(modelPath: string): Promise<EngineInfo> {
        const run = this.#switching.then(() => this.#switchModel(modelPath));
        this.#switching = run.catch(() => undefined);
        return run;
    }

    async #switchModel(modelPath: string): Promise<EngineInfo> {
        await this.#whenRunning(); // not while it restarts after a crash, is down or is disposed
        const facts = await this.inspectModel(modelPath);
        const modelName = facts.name !== undefined && facts.name !== "" ? facts.name : facts.fileName.replace(/\.gguf$/i, "");
        return this.#restartWith(
            { ...this.#config, modelPath },
            {
                reason: `The model is being switched to ${modelPath}; the engine restarts on it.`,
                endWith: (what) => new ModelSwitchedError(modelName, what),
                cause: "model"
            }
        );
    }

    /**
     * Restarts the engine on the same model with other settings (the settings screen's
     * applyEngineSettings, host/settings/): as a model switch, running turns and calls end with
     * `change.endWith`'s error, and a configuration that does not start falls back to the previous
     * one, rejecting with why. One change at a time, with model switches. Resolves with the new info.
     */
    reconfigure(changes: Partial<Omit<EngineConfigInput, "modelPath">>, change: EngineRestart): Promise<EngineInfo> {
        const run = this.#switching.then(async () => {
            await this.#whenRunning();
            return this.#restartWith({ ...this.#config, ...changes, modelPath: this.#config.modelPath }, { ...change, cause: "settings" });
        });
        this.#switching = run.catch(() => undefined);
        return run;
    }

    async #restartWith(next: EngineConfigInput, change: EngineRestart & { readonly cause: "model" | "settings" }): Promise<EngineInfo> {
        const { modelPath } = next;
        const connection = await this.#whenRunning();
        const previous = this.#config;
        // Turns, which a user sent: the host's own calls in flight (the memory record's poll, a snapshot) end too, uncounted.
        const numEnded = connection.numTurns;
        this.#release();
        this.#state = "restarting";
        this.#restartReason = change.reason;
        this.#log(`${change.reason} Ending ${numEnded} request(s) in flight.`);
        await connection.shutdown(this.#options.shutdownGraceMs, change.endWith);
        if (this.#isDisposed()) {
            throw new EngineStoppedError("The engine was shut down while it was restarting on new settings.");
        }
        this.#config = next;
        let started: EngineConnection;
        try {
            started = await this.#open();
        } catch (error) {
            this.#config = previous;
            this.#log(
                `the engine did not start on ${modelPath} with these settings (${(error as Error).message}); starting the previous model and settings again.`
            );
            if (this.#isDisposed()) {
                throw error;
            }
            try {
                this.#adopt(await this.#open());
            } catch (again) {
                this.#goDown(
                    `The engine did not start on ${modelPath}, nor again on the previous model and settings (${(again as Error).message}). Check the model and the engine settings, then restart Kvault.`
                );
            }
            throw error;
        }
        if (this.#isDisposed()) {
            await started.shutdown(this.#options.shutdownGraceMs);
            throw new EngineStoppedError("The engine was shut down while it was restarting on new settings.");
        }
        this.#adopt(started);
        this.#log(`engine process ${started.pid} is ready on ${started.info.modelName}.`);
        this.#events.emit("switched", { pid: started.pid, info: started.info, numEnded, cause: change.cause });
        return started.info;
    }

    /**
     * Shuts the engine down (running turns end with engine_stopped), kills it if it does not exit
     * within the grace period, and resolves once no engine process is left. Idempotent.
     */
    dispose(): Promise<void> {
        this.#disposing ??= (async () => {
            this.#state = "disposed";
            this.#restartAbort.abort();
            this.#rejectWaiters(new EngineStoppedError("The engine was shut down; nothing more will be generated."));
            const connection = this.#connection;
            this.#release();
            await Promise.all([connection?.shutdown(this.#options.shutdownGraceMs), this.#restarting]);
        })();
        return this.#disposing;
    }

    #open(): Promise<EngineConnection> {
        return EngineConnection.open(this.#spawner, this.#config, {
            startTimeoutMs: this.#options.startTimeoutMs,
            signal: this.#restartAbort.signal,
            log: this.#log,
            onCrash: (exit, numInterrupted) => this.#onCrash(exit, numInterrupted)
        });
    }

    #adopt(connection: EngineConnection): void {
        this.#connection = connection;
        this.#info = connection.info;
        this.#state = "running";
        this.#restartReason = undefined;
        this.#liveness = new LivenessMonitor(
            (deadlineMs) => connection.call("ping", {}, deadlineMs),
            { pingIntervalMs: this.#options.pingIntervalMs, pingDeadlineMs: this.#options.pingDeadlineMs },
            (waitedMs) => this.#onUnresponsive(connection, waitedMs)
        );
        for (const waiter of [...this.#waiters]) {
            waiter.resolve(connection);
        }
    }

    #onCrash(exit: EngineExit, numInterrupted: number): void {
        if (this.#state === "disposed") {
            return;
        }
        this.#release();
        const willRestart = this.#budget.canRestart(performance.now());
        this.#log(
            `engine process ${exit.pid} stopped (${describeExit(exit.code, exit.signal)}) with ${numInterrupted} request(s) in flight; ${willRestart ? "restarting it" : "restart budget spent"}.`
        );
        this.#events.emit("crashed", { pid: exit.pid, exitCode: exit.code, signal: exit.signal, numInterrupted, willRestart });
        if (!willRestart) {
            this.#goDown(
                `The engine process stopped again (${describeExit(exit.code, exit.signal)}) after ${this.#options.maxRestarts} restarts within ${this.#options.restartWindowMs / 1000} s, ` +
                    "so Kvault stopped restarting it. Check the model and engine settings, then restart Kvault."
            );
            return;
        }
        this.#state = "restarting";
        this.#restartReason ??= `The engine process stopped (${describeExit(exit.code, exit.signal)}); it is restarting.`;
        this.#restarting = this.#restart()
            .catch((error: unknown) => {
                this.#goDown(`Restarting the engine failed unexpectedly: ${(error as Error).message}. Restart Kvault.`);
            })
            .finally(() => {
                this.#restarting = undefined;
            });
    }

    /** No current engine: nothing is sent to it, nothing pings it. */
    #release(): void {
        this.#connection = undefined;
        this.#liveness?.dispose();
        this.#liveness = undefined;
    }

    /**
     * A ping went unanswered past its deadline: the process is frozen (SIGSTOP, a debugger, a
     * native hang). New calls wait for the next engine; what is in flight ends with
     * engine_unresponsive now rather than at its own limit; the process is killed, and its exit
     * restarts it within the budget as a crash would.
     */
    #onUnresponsive(connection: EngineConnection, waitedMs: number): void {
        if (this.#connection !== connection || this.#isDisposed()) {
            return;
        }
        const seconds = (waitedMs / 1000).toLocaleString("en-US");
        this.#release();
        this.#state = "restarting";
        this.#restartReason = `Engine process ${connection.pid} did not answer a liveness ping within ${seconds} s, so it was killed; it is restarting.`;
        this.#log(
            `engine process ${connection.pid} did not answer a ping within ${seconds} s; ending ${connection.numPending} request(s) and killing it.`
        );
        connection.kill((what) => new EngineUnresponsiveError(waitedMs, what));
    }

    /** Starts new engine processes until one is ready, the budget is spent, or the supervisor is disposed. */
    async #restart(): Promise<void> {
        for (;;) {
            const now = performance.now();
            const numRecent = this.#budget.numRecent(now);
            this.#budget.take(now);
            if (numRecent > 0) {
                await restartPause(Math.min(4_000, this.#options.restartBackoffMs * 2 ** (numRecent - 1)), this.#restartAbort.signal);
            }
            if (this.#isDisposed()) {
                return;
            }
            try {
                const connection = await this.#open();
                if (this.#isDisposed()) {
                    // disposed while it started: dispose() waits for this
                    await connection.shutdown(this.#options.shutdownGraceMs);
                    return;
                }
                this.#numRestarts++;
                this.#adopt(connection);
                this.#log(`engine process ${connection.pid} is ready (restart ${this.#numRestarts}).`);
                this.#events.emit("restarted", { pid: connection.pid, info: connection.info, numRestarts: this.#numRestarts });
                return;
            } catch (error) {
                if (this.#isDisposed()) {
                    return;
                }
                this.#log(`restarting the engine failed: ${(error as Error).message}`);
                if (!this.#budget.canRestart(performance.now())) {
                    this.#goDown(
                        `The engine did not come back after ${this.#options.maxRestarts} restarts within ${this.#options.restartWindowMs / 1000} s; ` +
                            `the last try said: ${(error as Error).message} Check the model and engine settings, then restart Kvault.`
                    );
                    return;
                }
            }
        }
    }

    /** A method, not `#state === "disposed"` inline: dispose() can run during any await. */
    #isDisposed(): boolean {
        return this.#disposing !== undefined;
    }

    #goDown(message: string): void {
        const error = new EngineUnavailableError(message);
        this.#state = "down";
        this.#downError = error;
        this.#rejectWaiters(error);
        this.#events.emit("down", { error });
    }

    /** The running engine, or, while it restarts, the next one (for at most restartWaitMs). */
    #whenRunning(signal?: AbortSignal): Promise<EngineConnection> {
        if (this.#state === "disposed") {
            return Promise.reject(new EngineStoppedError("The engine was shut down; nothing more will be generated."));
        }
        if (this.#state === "down") {
            return Promise.reject(this.#downError);
        }
        if (this.#connection !== undefined) {
            return Promise.resolve(this.#connection);
        }
        if (signal?.aborted) {
            return Promise.reject(new CancelledBeforeSendError());
        }
        return new Promise((resolve, reject) => {
            const waitMs = this.#options.restartWaitMs;
            const timer = setTimeout(
                () =>
                    finish(() =>
                        reject(
                            new EngineUnavailableError(
                                `The engine is restarting and was not back within ${(waitMs / 1000).toLocaleString("en-US")} s. Try again in a moment.`
                            )
                        )
                    ),
                waitMs
            );
            const abort = (): void => finish(() => reject(new CancelledBeforeSendError()));
            const finish = (settle: () => void): void => {
                clearTimeout(timer);
                signal?.removeEventListener("abort", abort);
                this.#waiters.delete(waiter);
                settle();
            };
            const waiter: Waiter = {
                resolve: (connection) => finish(() => resolve(connection)),
                reject: (error) => finish(() => reject(error))
            };
            signal?.addEventListener("abort", abort, { once: true });
            this.#waiters.add(waiter);
        });
    }

    #rejectWaiters(error: Error): void {
        for (const waiter of [...this.#waiters]) {
            waiter.reject(error);
        }
    }
}
