import type { EngineErrorPayload, EngineEvent } from "../../contract/engineProtocol.js";
import type { EngineTransport } from "./EngineTransport.js";
import { engineMethods, type EngineImplementations, type ServedEngine } from "./engineMethods.js";
import { parseEngineCommand, type ReceivedEngineCommand } from "./parseEngineCommand.js";
import { toErrorPayload } from "./toErrorPayload.js";
import { withDeadline } from "../core/withDeadline.js";

export type { ServedEngine } from "./engineMethods.js";

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
 * Serves host commands against one EngineService inside the engine process: runs chats
 * concurrently (one AbortController per requestId) and streams their events, and answers every
 * `call` by its callId from the engine's method table. A malformed message is answered when it
 * names whom to answer, and logged; it never throws out of `handle`.
 */
export class EngineCommandServer {
    readonly #running = new Map<string, AbortController>();
    /** Every chat's and every call's whole life, its last event's send included: shutdown waits for them. */
    readonly #settling = new Set<Promise<void>>();
    readonly #methods: EngineImplementations;
    #stopping: Promise<void> | undefined;

    constructor(
        private readonly service: ServedEngine & { dispose(): Promise<void> },
        private readonly transport: EngineTransport,
        private readonly options: {
            readonly log: (line: string) => void;
            /** The host asked to shut down: the process entry stops this server, then exits. */
            readonly onShutdown: () => void;
        }
    ) {
        this.#methods = engineMethods(service);
    }

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

    #dispatch(command: ReceivedEngineCommand): void {
        switch (command.type) {
            case "chat":
                this.#chat(command.request);
                return;
            case "cancel":
                this.#running.get(command.requestId)?.abort();
                return;
            case "call": {
                const { callId } = command;
                // Calls that run for a while (an audit's slices, a replay, a drill, a canary run) are
                // tracked like chats: shutdown waits for them before it disposes the engine under them.
                this.#track(
                    this.#attempt(() => (this.#methods[command.method] as (params: unknown) => unknown)(command.params)).then(
                        (result) => this.transport.send({ type: "answer", callId, result }),
                        (error: unknown) => this.transport.send({ type: "answer", callId, error: toErrorPayload(error) })
                    )
                );
                return;
            }
            case "shutdown":
                this.options.onShutdown();
                return;
        }
    }

    /** `run()`'s value as a promise; a synchronous throw becomes its rejection. */
    #attempt(run: () => unknown): Promise<unknown> {
        try {
            return Promise.resolve(run());
        } catch (error) {
            return Promise.reject(error);
        }
    }

    #track(settling: Promise<void>): void {
        const settled = settling.finally(() => this.#settling.delete(settled));
        this.#settling.add(settled);
    }

    #chat(request: Extract<ReceivedEngineCommand, { type: "chat" }>["request"]): void {
        const { requestId } = request;
        if (this.#running.has(requestId)) {
            // Answering would end the running chat of that id for its host; the duplicate gets no answer.
            this.options.log(`ignored a chat: request ${JSON.stringify(requestId)} is already running.`);
            return;
        }
        const controller = new AbortController();
        this.#running.set(requestId, controller);
        // The service's events go to the host as they are: the one shape from the engine to the page.
        const send = (event: EngineEvent): void => void this.transport.send(event);
        this.#track(
            this.#attempt(() => this.service.chat(request, send, controller.signal))
                .then(
                    (result) => {
                        const { text, finishReason, usage, logprobs } = result as Awaited<ReturnType<ServedEngine["chat"]>>;
                        return this.transport.send({
                            type: "finished",
                            requestId,
                            text,
                            finishReason,
                            usage,
                            ...(logprobs === undefined ? {} : { logprobs })
                        });
                    },
                    (error: unknown) =>
                        this.transport.send({
                            type: "failed",
                            requestId,
                            error: this.#stopping !== undefined ? STOPPED_MID_TURN : toErrorPayload(error)
                        })
                )
                .finally(() => this.#running.delete(requestId))
        );
    }

    #refuseWhileStopping(command: ReceivedEngineCommand): void {
        switch (command.type) {
            case "chat":
                if (!this.#running.has(command.request.requestId)) {
                    void this.transport.send({ type: "failed", requestId: command.request.requestId, error: STOPPING });
                }
                return;
            case "call":
                void this.transport.send({ type: "answer", callId: command.callId, error: STOPPING });
                return;
            case "cancel":
            case "shutdown":
                return;
        }
    }
}
