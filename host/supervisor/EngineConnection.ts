import {
    eventsOfEngineMessage,
    type ChatTurnRequest,
    type EngineCommand,
    type EngineErrorPayload,
    type EngineInfo,
    type FinishReason,
    type TokenLogprob,
    type TurnUsage
} from "../../contract/engineProtocol.js";
import type { EngineMethod, RpcParams, RpcResult } from "../../contract/rpc.js";
import { readTurnEvent, type TurnEvent, type TurnListener } from "../../contract/turnEvents.js";
import { EngineStoppedError, InvalidRequestError } from "../../engine/index.js";
import type { EngineConfigInput, TurnResult } from "../../engine/index.js";
import {
    CancelledBeforeSendError,
    EngineCallTimeoutError,
    EngineCrashedError,
    EngineRequestError,
    EngineStartError
} from "./engineHostErrors.js";
import type { EngineChildProcess, EngineProcessSpawner } from "./EngineProcessSpawner.js";
import { errorPayload, isErrorPayload, isRecord, startError } from "./readEngineMessage.js";

export interface EngineExit {
    readonly pid: number | undefined;
    readonly code: number | null;
    readonly signal: NodeJS.Signals | null;
}

export interface OpenEngineOptions {
    readonly startTimeoutMs: number;
    /** Aborting kills a process that is still starting; `open` rejects with EngineStoppedError. */
    readonly signal?: AbortSignal;
    /** The process ended without being asked to, after it was ready; every pending call has been rejected by then. */
    readonly onCrash: (exit: EngineExit, numInterrupted: number) => void;
    readonly log: (line: string) => void;
}

interface PendingTurn {
    readonly listener: TurnListener | undefined;
    /** Held to a grammar: its wait for a token after its first is watched (MAX_GRAMMAR_TOKEN_MS). */
    readonly hasGrammar: boolean;
    /** When its latest token came (performance.now()); undefined before the first. */
    lastTokenAt?: number;
    resolve(result: TurnResult): void;
    reject(error: Error): void;
}

interface PendingCall {
    resolve(value: unknown): void;
    reject(error: Error): void;
}

type Phase = "starting" | "ready" | "stopping" | "exited";

/**
 * One engine process from its spawn to its exit, host side: the start handshake, turns routed by
 * requestId, calls by callId. When the process ends, everything still pending there rejects:
 * EngineCrashedError if nobody asked it to stop, EngineStoppedError if the host did.
 */
export class EngineConnection {
    readonly #turns = new Map<string, PendingTurn>();
    readonly #calls = new Map<string, PendingCall>();
    #phase: Phase = "starting";
    #exit: EngineExit | undefined;
    #stopRequested = false;
    #info: EngineInfo | undefined;
    #numCalls = 0;
    /** Set by `kill`: why everything sent from then on fails, and how many requests it ended. */
    #killedWith: ((what: "turn" | "call") => Error) | undefined;
    #numKilled = 0;
    readonly exited: Promise<EngineExit>;
    #resolveExited!: (exit: EngineExit) => void;

    private constructor(
        private readonly child: EngineChildProcess,
        private readonly options: OpenEngineOptions
    ) {
        this.exited = new Promise((resolve) => {
            this.#resolveExited = resolve;
        });
    }

    /** Spawns an engine process and resolves once it is ready; a failed start leaves no process behind. */
    static open(spawner: EngineProcessSpawner, config: EngineConfigInput, options: OpenEngineOptions): Promise<EngineConnection> {
        const connection = new EngineConnection(spawner.spawnEngineProcess(config), options);
        return connection.#handshake();
    }

    get pid(): number | undefined {
        return this.child.pid;
    }

    get info(): EngineInfo {
        if (this.#info === undefined) {
            throw new Error("EngineConnection.info read before the engine was ready.");
        }
        return this.#info;
    }

    get numPending(): number {
        return this.#turns.size + this.#calls.size;
    }

    /** Turns running or queued in this engine (calls not counted). */
    get numTurns(): number {
        return this.#turns.size;
    }

    /** The longest a turn held to a grammar has now waited for its next token, after its first; 0 when none waits. */
    get longestGrammarWaitMs(): number {
        const now = performance.now();
        let longest = 0;
        for (const turn of this.#turns.values()) {
            if (turn.hasGrammar && turn.lastTokenAt !== undefined) {
                longest = Math.max(longest, now - turn.lastTokenAt);
            }
        }
        return longest;
    }

    chat(request: ChatTurnRequest, listener: TurnListener | undefined, signal?: AbortSignal): Promise<TurnResult> {
        const { requestId } = request;
        const closed = this.#closedError("turn");
        if (closed !== undefined) {
            return Promise.reject(closed);
        }
        if (this.#turns.has(requestId)) {
            return Promise.reject(
                new InvalidRequestError(`Request ${JSON.stringify(requestId)} is already running; give each turn its own requestId.`)
            );
        }
        if (signal?.aborted) {
            return Promise.reject(new CancelledBeforeSendError());
        }
        return new Promise<TurnResult>((resolve, reject) => {
            const cancel = (): void => this.child.send({ type: "cancel", requestId });
            signal?.addEventListener("abort", cancel, { once: true });
            const settle = (): void => {
                this.#turns.delete(requestId);
                signal?.removeEventListener("abort", cancel);
            };
            this.#turns.set(requestId, {
                listener,
                hasGrammar: request.sampling.grammar !== undefined,
                resolve: (result) => {
                    settle();
                    resolve(result);
                },
                reject: (error) => {
                    settle();
                    reject(error);
                }
            });
            this.child.send({ type: "chat", request });
        });
    }

    /** One engine-served method of the RPC spec; rejects with engine_timeout when no answer comes within `timeoutMs`. */
    call<M extends EngineMethod>(method: M, params: RpcParams<M>, timeoutMs: number): Promise<RpcResult<M>> {
        const closed = this.#closedError("call");
        if (closed !== undefined) {
            return Promise.reject(closed);
        }
        const callId = `call-${++this.#numCalls}`;
        return new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                this.#calls.delete(callId);
                reject(
                    new EngineCallTimeoutError(
                        `The engine did not answer ${/^[aeiou]/.test(method) ? "an" : "a"} ${method} call within ${(timeoutMs / 1000).toLocaleString("en-US")} s. ` +
                            "It may be busy with a long prompt; try again, and restart Kvault if this repeats."
                    )
                );
            }, timeoutMs);
            const settle = (): void => {
                clearTimeout(timer);
                this.#calls.delete(callId);
            };
            this.#calls.set(callId, {
                resolve: (value) => {
                    settle();
                    resolve(value as RpcResult<M>);
                },
                reject: (error) => {
                    settle();
                    reject(error);
                }
            });
            this.child.send({ type: "call", callId, method, params } as EngineCommand);
        });
    }

    /**
     * Asks the engine to shut down (it ends running turns with engine_stopped and exits), and
     * kills it if it has not exited within `graceMs`. Resolves once the process is gone. With
     * `endPending`, running turns and calls reject with its error at once.
     */
    async shutdown(graceMs: number, endPending?: (what: "turn" | "call") => Error): Promise<EngineExit> {
        if (this.#phase === "ready") {
            if (endPending !== undefined) {
                this.#rejectAll(endPending);
            } // now, with the caller's reason, rather than engine_stopped once the process has gone
            this.#phase = "stopping";
            this.#stopRequested = true;
            this.child.send({ type: "shutdown" });
        }
        const timer = setTimeout(() => {
            this.options.log(`engine process ${this.pid} did not exit within ${graceMs} ms of shutdown; killing it.`);
            this.child.kill("SIGKILL");
        }, graceMs);
        try {
            return await this.exited;
        } finally {
            clearTimeout(timer);
        }
    }

    /**
     * Ends the process without asking it (a stopped or frozen process cannot handle `shutdown`):
     * everything pending rejects with `makeError` now, later sends too, and the process gets
     * SIGKILL. Its exit still reaches `onCrash`, counting the requests ended here, so the
     * supervisor restarts it within its budget. Only a ready engine; idempotent.
     */
    kill(makeError: (what: "turn" | "call") => Error): void {
        if (this.#phase !== "ready" || this.#killedWith !== undefined) {
            return;
        }
        this.#killedWith = makeError;
        this.#numKilled = this.numPending;
        this.#rejectAll(makeError);
        this.child.kill("SIGKILL");
    }

    /** Why nothing can be sent any more, if so: what was pending when the process ended was rejected then, and later sends would wait forever. */
    #closedError(what: "turn" | "call"): Error | undefined {
        if (this.#killedWith !== undefined) {
            return this.#killedWith(what);
        }
        if (this.#phase === "stopping" || (this.#phase === "exited" && this.#stopRequested)) {
            return new EngineStoppedError("The engine was shut down and takes no new work.");
        }
        if (this.#phase === "exited") {
            const exit = this.#exit!;
            return new EngineCrashedError(exit.pid, exit.code, exit.signal, what);
        }
        return undefined;
    }

    #handshake(): Promise<EngineConnection> {
        return new Promise((resolve, reject) => {
            const { startTimeoutMs, signal } = this.options;
            let failure: Error | undefined;
            let reason: EngineErrorPayload | undefined;
            const fail = (error: Error): void => {
                failure ??= error;
                this.child.kill("SIGKILL");
            };
            const timer = setTimeout(
                () =>
                    fail(
                        new EngineStartError(
                            `The engine process did not become ready within ${(startTimeoutMs / 1000).toLocaleString("en-US")} s, so it was stopped. ` +
                                "Loading a large model on a slow disk can take this long: try again, or choose a smaller model."
                        )
                    ),
                startTimeoutMs
            );
            const abort = (): void => fail(new EngineStoppedError("The engine was shut down while it was starting."));
            signal?.addEventListener("abort", abort, { once: true });
            if (signal?.aborted) {
                abort();
            }
            const done = (): void => {
                clearTimeout(timer);
                signal?.removeEventListener("abort", abort);
            };

            const receive = (message: unknown): void => {
                if (!isRecord(message)) {
                    return;
                }
                if (this.#phase === "starting" && message.type === "ready" && failure === undefined) {
                    done();
                    this.#phase = "ready";
                    this.#info = message.info as EngineInfo;
                    resolve(this);
                } else if (this.#phase === "starting" && message.type === "startFailed") {
                    reason = isErrorPayload(message.error) ? message.error : undefined;
                } else {
                    this.#route(message);
                }
            };
            // One turn's events may come in one message (engine/process/batchEvents.ts).
            this.child.on("message", (message) => eventsOfEngineMessage(message).forEach(receive));
            this.child.on("exit", (code, signalName) => {
                const exit: EngineExit = { pid: this.child.pid, code, signal: signalName };
                this.#exit = exit;
                const phase = this.#phase;
                this.#phase = "exited";
                if (phase === "starting") {
                    done();
                    reject(failure ?? startError(exit, reason, this.child.recentOutput?.()));
                } else {
                    const numInterrupted = this.numPending + this.#numKilled;
                    this.#rejectAll(
                        phase === "stopping"
                            ? () =>
                                  new EngineStoppedError("The engine was shut down while this request ran; nothing more will be generated.")
                            : (what) => new EngineCrashedError(exit.pid, code, signalName, what)
                    );
                    if (phase === "ready") {
                        this.options.onCrash(exit, numInterrupted);
                    }
                }
                this.#resolveExited(exit);
            });
        });
    }

    /** Engine → host events, by id. An event for an id nobody waits for (late, after a timeout) is dropped. */
    #route(message: Record<string, unknown>): void {
        if (message.type === "answer") {
            this.#answer(message);
            return;
        }
        const id = typeof message.requestId === "string" ? message.requestId : undefined;
        if (id === undefined) {
            return;
        }
        switch (message.type) {
            case "queued":
            case "started":
            case "text": {
                const event = readTurnEvent(message);
                if (event === undefined) {
                    return;
                }
                const turn = this.#turns.get(id);
                if (turn !== undefined && event.type === "text") {
                    turn.lastTokenAt = performance.now();
                }
                this.#notify(id, event);
                return;
            }
            case "finished":
                this.#turns.get(id)?.resolve({
                    text: String(message.text),
                    finishReason: message.finishReason as FinishReason,
                    usage: message.usage as TurnUsage,
                    ...(Array.isArray(message.logprobs) ? { logprobs: message.logprobs as TokenLogprob[] } : {})
                });
                return;
            case "failed":
                this.#turns.get(id)?.reject(new EngineRequestError(errorPayload(message.error)));
                return;
            default:
                this.options.log(`ignored an engine event of type ${JSON.stringify(message.type)}.`);
        }
    }

    /** A call's answer, by callId. */
    #answer(message: Record<string, unknown>): void {
        const call = typeof message.callId === "string" ? this.#calls.get(message.callId) : undefined;
        if (call === undefined) {
            return;
        }
        if (message.error !== undefined) {
            call.reject(new EngineRequestError(errorPayload(message.error)));
        } else {
            call.resolve(message.result);
        }
    }

    /** Hands `event` to its turn's listener as it came; the engine does not wait for a promise back. */
    #notify(requestId: string, event: TurnEvent): void {
        const turn = this.#turns.get(requestId);
        if (turn === undefined) {
            return;
        }
        try {
            void turn.listener?.(event);
        } catch (error) {
            // A caller's listener must not break routing for every other turn.
            this.options.log(`a turn listener for ${JSON.stringify(requestId)} threw: ${(error as Error).message}`);
        }
    }

    #rejectAll(makeError: (what: "turn" | "call") => Error): void {
        for (const turn of [...this.#turns.values()]) {
            turn.reject(makeError("turn"));
        }
        for (const call of [...this.#calls.values()]) {
            call.reject(makeError("call"));
        }
    }
}
