import {
    callAnswerTypes,
    type ChatTurnRequest,
    type EngineCommand,
    type EngineErrorPayload,
    type EngineEvent
} from "../../contract/engineProtocol.js";
import type { EngineService } from "../service/EngineService.js";
import type { EngineTransport } from "./EngineTransport.js";
import { parseEngineCommand } from "./parseEngineCommand.js";
import { toErrorPayload } from "./toErrorPayload.js";
import { withDeadline } from "../core/withDeadline.js";

/** What the server needs of EngineService; tests may serve a stand-in. */
export type ServedEngine = Pick<
    EngineService,
    | "chat"
    | "measure"
    | "snapshot"
    | "forgetWorkspace"
    | "audit"
    | "replayableTurns"
    | "replay"
    | "listDrills"
    | "runDrill"
    | "runCanary"
    | "dispose"
>;

const STOPPING: EngineErrorPayload = {
    code: "engine_stopped",
    message: "The engine is shutting down and took no new work. Send the request again once it has restarted."
};
const STOPPED_MID_TURN: EngineErrorPayload = {
    code: "engine_stopped",
    message: "The engine shut down while this turn ran; nothing more will be generated. Send it again once the engine has restarted."
};
/** How long shutdown waits for cancelled chats to end before it disposes the engine under them. */
const CANCEL_DRAIN_MS = 5_000;

/**
 * Serves host commands against one EngineService inside the engine process: validates each
 * message, runs chats concurrently (one AbortController per requestId) and streams their events,
 * answers calls by callId. A malformed message is answered when it names whom to answer, and
 * logged; it never throws out of `handle`.
 */
export class EngineCommandServer {
    readonly #running = new Map<string, AbortController>();
    /** Every chat's whole life, and every audit's, replay's, drill's and canary run's, its last event's send included: shutdown waits for them. */
    readonly #settling = new Set<Promise<void>>();
    #stopping: Promise<void> | undefined;

    constructor(
        private readonly service: ServedEngine,
        private readonly transport: EngineTransport,
        private readonly options: {
            readonly log: (line: string) => void;
            /** The host asked to shut down: the process entry stops this server, then exits. */
            readonly onShutdown: () => void;
        }
    ) {}

    get numRunning(): number {
        return this.#running.size;
    }

    handle(message: unknown): void {
        try {
            this.#handle(message);
        } catch (error) {
            // A bug here must cost one command, not the process and every other workspace's turn.
            this.options.log(`failed to handle a command: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        }
    }

    #handle(message: unknown): void {
        const parsed = parseEngineCommand(message);
        if (!parsed.ok) {
            this.options.log(`refused a command: ${parsed.error.message}`);
            // A refusal addressed to a running chat's id would end that chat for its host.
            if (parsed.reply !== undefined && !(parsed.reply.type === "failed" && this.#running.has(parsed.reply.requestId))) {
                void this.transport.send(parsed.reply);
            }
            return;
        }
        if (this.#stopping !== undefined) {
            this.#refuseWhileStopping(parsed.command);
            return;
        }
        this.#dispatch(parsed.command);
    }

    /**
     * Cancels every running chat (so the engine frees their pages the ordinary way), lets them end
     * with `engine_stopped`, then disposes the engine. Resolves once their events are sent.
     */
    stop(): Promise<void> {
        this.#stopping ??= (async () => {
            for (const controller of this.#running.values()) {
                controller.abort();
            }
            await withDeadline(Promise.allSettled([...this.#settling]), CANCEL_DRAIN_MS);
            try {
                await this.service.dispose();
            } catch (error) {
                this.options.log(`dispose failed: ${toErrorPayload(error).message}`);
            }
            await Promise.allSettled([...this.#settling]);
        })();
        return this.#stopping;
    }

    #dispatch(command: EngineCommand): void {
        switch (command.type) {
            case "chat":
                this.#chat(command.request);
                return;
            case "cancel":
                this.#running.get(command.requestId)?.abort();
                return;
            case "measure": {
                const { callId, workspace, messages, draft } = command;
                try {
                    void this.transport.send({ type: "measured", callId, result: this.service.measure(workspace, messages, draft) });
                } catch (error) {
                    void this.transport.send({ type: "measured", callId, error: toErrorPayload(error) });
                }
                return;
            }
            case "snapshot":
                try {
                    void this.transport.send({ type: "snapshot", callId: command.callId, snapshot: this.service.snapshot() });
                } catch (error) {
                    void this.transport.send({ type: "snapshot", callId: command.callId, error: toErrorPayload(error) });
                }
                return;
            case "forgetWorkspace": {
                const { callId, workspace } = command;
                this.service.forgetWorkspace(workspace).then(
                    () => this.transport.send({ type: "forgotten", callId }),
                    (error: unknown) => this.transport.send({ type: "forgotten", callId, error: toErrorPayload(error) })
                );
                return;
            }
            case "audit": // byte scans in slices: it resolves later, and shutdown waits for it
                this.#answerLater(
                    command.callId,
                    "audited",
                    this.#attempt(async () => this.service.audit())
                );
                return;
            case "replayableTurns":
                this.#answer(command.callId, "replayableTurns", () => this.service.replayableTurns());
                return;
            case "listDrills":
                this.#answer(command.callId, "drills", () => this.service.listDrills());
                return;
            case "replay":
                this.#answerLater(
                    command.callId,
                    "replayed",
                    this.#attempt(() => this.service.replay(command.requestId))
                );
                return;
            case "runDrill":
                this.#answerLater(
                    command.callId,
                    "drillReport",
                    this.#attempt(() => this.service.runDrill(command.drillId))
                );
                return;
            case "runCanary": {
                const { fillerTokens } = command;
                this.#answerLater(
                    command.callId,
                    "canaryReport",
                    this.#attempt(() => this.service.runCanary(fillerTokens === undefined ? {} : { fillerTokens }))
                );
                return;
            }
            case "shutdown":
                this.options.onShutdown();
                return;
        }
    }

    /** Answers a call whose engine method returns at once: its result, or what it threw. */
    #answer<T extends AnswerType>(callId: string, type: T, run: () => AnswerOf<T>): void {
        let event: EngineEvent;
        try {
            event = { type, callId, result: run() } as EngineEvent;
        } catch (error) {
            event = { type, callId, error: toErrorPayload(error) } as EngineEvent;
        }
        void this.transport.send(event);
    }

    /** Answers a call that runs for a while (a replay, a drill); shutdown waits for it before it disposes the engine under it. */
    #answerLater<T extends AnswerType>(callId: string, type: T, running: Promise<AnswerOf<T>>): void {
        const settled = running
            .then(
                (result) => this.transport.send({ type, callId, result } as EngineEvent),
                (error: unknown) => this.transport.send({ type, callId, error: toErrorPayload(error) } as EngineEvent)
            )
            .finally(() => this.#settling.delete(settled));
        this.#settling.add(settled);
    }

    /** `run()`'s promise; a synchronous throw becomes its rejection. */
    #attempt<T>(run: () => Promise<T>): Promise<T> {
        try {
            return run();
        } catch (error) {
            return Promise.reject(error);
        }
    }

    #chat(request: ChatTurnRequest): void {
        const { requestId } = request;
        if (this.#running.has(requestId)) {
            // Answering would end the running chat of that id for its host; the duplicate gets no answer.
            this.options.log(`ignored a chat: request ${JSON.stringify(requestId)} is already running.`);
            return;
        }
        const controller = new AbortController();
        this.#running.set(requestId, controller);
        const send = (event: EngineEvent): void => void this.transport.send(event);
        const settled = this.service
            .chat(
                request,
                {
                    onQueued: (position) => send({ type: "queued", requestId, position }),
                    onStarted: () => send({ type: "started", requestId }),
                    onText: (text, logprobs) => send({ type: "token", requestId, text, ...(logprobs === undefined ? {} : { logprobs }) })
                },
                controller.signal
            )
            .then(
                ({ text, finishReason, usage, logprobs }) =>
                    this.transport.send({
                        type: "finished",
                        requestId,
                        text,
                        finishReason,
                        usage,
                        ...(logprobs === undefined ? {} : { logprobs })
                    }),
                (error: unknown) =>
                    this.transport.send({
                        type: "failed",
                        requestId,
                        error: this.#stopping !== undefined ? STOPPED_MID_TURN : toErrorPayload(error)
                    })
            )
            .finally(() => {
                this.#running.delete(requestId);
                this.#settling.delete(settled);
            });
        this.#settling.add(settled);
    }

    #refuseWhileStopping(command: EngineCommand): void {
        switch (command.type) {
            case "chat":
                if (!this.#running.has(command.request.requestId)) {
                    void this.transport.send({ type: "failed", requestId: command.request.requestId, error: STOPPING });
                }
                return;
            case "cancel":
            case "shutdown":
                return;
            default:
                void this.transport.send({ type: callAnswerTypes[command.type], callId: command.callId, error: STOPPING });
                return;
        }
    }
}

/** The answer events of the isolation calls, and what each carries as its result. */
type AnswerType = "audited" | "replayableTurns" | "replayed" | "drills" | "drillReport" | "canaryReport";
type AnswerOf<T extends AnswerType> = NonNullable<Extract<EngineEvent, { type: T }>["result"]>;
