import type { ChatTurnRequest, TurnResult } from "../../contract/engineProtocol.js";
import type { ActiveTurn, ChatTurnResult } from "../../contract/rpc.js";
import type { TurnEvent } from "../../contract/turnEvents.js";
import { turnTiming } from "../../contract/turnTiming.js";
import { MODEL_NAME_MAX_CHARS } from "../../contract/rpc/storeSchemas.js";
import type { StoredMessage } from "../../contract/workspaces.js";
import { InvalidRequestError, KvaultError } from "../../engine/index.js";
import type { TurnRunner } from "../backends/routeTurns.js";
import { untilAborted } from "./untilAborted.js";

/** Someone who hears a turn's events: a window or a socket (RpcCaller). Must not throw once gone. */
export interface TurnFollower {
    readonly id: number;
    send(event: TurnEvent): void;
}

/** Appends an answer to a stored chat, on disk before it resolves (WorkspaceStore.appendMessage, checked as the RPC checks it). */
export type KeepAnswer = (workspace: string, message: StoredMessage) => Promise<void>;

/** attachTurn named a turn that is not running and did not end a moment ago. */
export class TurnNotFoundError extends KvaultError {
    readonly code = "turn_not_found";

    constructor(requestId: string) {
        super(
            `No chat turn ${JSON.stringify(requestId)} is running, and none by that id ended a moment ago. Its answer, if it had one, is in the chat: reload the workspaces to see it.`
        );
    }
}

/** A chat's turn ended by a Stop (from any page): what streamed before it is kept in the chat. */
export class TurnStoppedError extends KvaultError {
    readonly code = "turn_stopped";

    constructor(numChars: number) {
        super(
            numChars === 0
                ? "The answer was stopped before it had any text; nothing was added to the chat."
                : `The answer was stopped; the ${numChars.toLocaleString("en-US")} characters written before the Stop are kept in the chat as a stopped answer.`
        );
    }
}

/** The clocks a turn's answer is stamped with: `wallMs` for its `at` (ms since 1970), `monotonicMs` for its timing. */
export interface TurnClock {
    wallMs(): number;
    monotonicMs(): number;
}

const systemClock: TurnClock = { wallMs: () => Date.now(), monotonicMs: () => performance.now() };

/** How many ended turns' outcomes are kept for a page that attaches just after the end (a bound, not a time). */
export const MAX_ENDED_TURNS = 32;

interface HostTurn {
    readonly request: ChatTurnRequest;
    readonly answerId: string;
    /** The message the answer follows (null: the chat's first); undefined: after the chat's last message. */
    readonly answerParent: string | null | undefined;
    readonly timing: ReturnType<typeof turnTiming>;
    readonly controller: AbortController;
    readonly followers: Map<number, TurnFollower>;
    /** Set by cancel: a Stop, whose partial answer is kept; an abort for any other reason keeps nothing. */
    stopped: boolean;
    phase: ActiveTurn["phase"];
    queuePosition: number | undefined;
    text: string;
    /** Its MCP tool events so far (calls awaiting permission, outcomes), replayed to a page that attaches. */
    readonly toolEvents: TurnEvent[];
    /** What runs it, once known: its `info` names the model kept on the answer. */
    runner?: TurnRunner;
    done?: Promise<ChatTurnResult>;
}

/**
 * The chats' turns, which belong to the host, not to the page that started them: a turn runs to
 * its end when its page goes away (closed, reloaded, its socket dropped), and the host keeps its
 * answer in the stored chat itself — on disk before the turn's end is announced to anyone. Any
 * page can follow a turn (attach: the text so far, then the rest live) and stop it; a stopped turn
 * keeps what streamed before the Stop, as "stopped", and ends with TurnStoppedError. The kept
 * answer follows the message the turn named (answerParent: for a regenerate, the question, so it
 * is a branch beside the earlier answer), is stamped `at` its end, and carries its timing (time
 * to first text and in all, measured here, so a page that reloads meanwhile still gets it). A turn that fails keeps nothing (the failure
 * is shown beside the chat), and neither does one aborted because the engine or host is stopping.
 */
export class HostTurns {
    readonly #running = new Map<string, HostTurn>();
    /** Outcomes of the last MAX_ENDED_TURNS ended turns, oldest first (a Map keeps insertion order). */
    readonly #ended = new Map<string, Promise<ChatTurnResult>>();

    /**
     * `engine` gives what runs a turn: the engine (resolved once it is ready), or for a workspace
     * on a remote backend that backend (host/backends/routeTurns.ts); it is asked once per turn.
     */
    constructor(
        private readonly engine: (request: ChatTurnRequest) => Promise<TurnRunner>,
        private readonly keep: KeepAnswer,
        private readonly clock: TurnClock = systemClock
    ) {}

    has(requestId: string): boolean {
        return this.#running.has(requestId);
    }

    /**
     * Runs `request` as a chat's turn, followed by `starter`; resolves with its result once the
     * answer is kept as message `answerId` after `answerParent` (undefined: after the chat's last message).
     */
    start(starter: TurnFollower, request: ChatTurnRequest, answerId: string, answerParent?: string | null): Promise<ChatTurnResult> {
        if (this.#running.has(request.requestId)) {
            throw new InvalidRequestError(
                `A chat turn with requestId ${JSON.stringify(request.requestId)} is already running; give each turn its own id.`
            );
        }
        const turn: HostTurn = {
            request,
            answerId,
            answerParent,
            timing: turnTiming(() => this.clock.monotonicMs()),
            controller: new AbortController(),
            followers: new Map([[starter.id, starter]]),
            stopped: false,
            phase: "waiting",
            queuePosition: undefined,
            text: "",
            toolEvents: []
        };
        // Registered before the engine wait, so a turn stopped while the engine starts never runs.
        this.#running.set(request.requestId, turn);
        const done = this.#run(turn).finally(() => this.#end(turn, done));
        turn.done = done;
        return done;
    }

    /**
     * `follower` hears the turn from now on: at once its state (queued or started) and the text so
     * far as one text event, then the rest live. Resolves (or rejects) as the turn does; a turn
     * that ended a moment ago settles at once; an unknown one fails with TurnNotFoundError.
     */
    attach(follower: TurnFollower, requestId: string): Promise<ChatTurnResult> {
        const turn = this.#running.get(requestId);
        if (turn === undefined) {
            return this.#ended.get(requestId) ?? Promise.reject(new TurnNotFoundError(requestId));
        }
        turn.followers.set(follower.id, follower);
        if (turn.phase === "queued") {
            follower.send({ type: "queued", requestId, position: turn.queuePosition ?? 1 });
        } else if (turn.phase === "running") {
            follower.send({ type: "started", requestId });
        }
        for (const event of turn.toolEvents) {
            follower.send(event);
        }
        if (turn.text !== "") {
            follower.send({ type: "text", requestId, text: turn.text });
        }
        return turn.done!;
    }

    /** Stops a running turn (from any page); its partial answer is kept as "stopped". False when none by that id runs. */
    cancel(requestId: string): boolean {
        const turn = this.#running.get(requestId);
        if (turn === undefined) {
            return false;
        }
        turn.stopped = true;
        turn.controller.abort();
        return true;
    }

    /** The running turns, oldest first. */
    list(): ActiveTurn[] {
        return [...this.#running.values()].map((turn) => ({
            requestId: turn.request.requestId,
            workspace: turn.request.workspace,
            answerId: turn.answerId,
            ...(turn.answerParent === undefined ? {} : { answerParent: turn.answerParent }),
            phase: turn.phase,
            ...(turn.queuePosition === undefined || turn.phase !== "queued" ? {} : { queuePosition: turn.queuePosition }),
            numChars: turn.text.length
        }));
    }

    /** A follower went away: it hears nothing more; its turns run on. Idempotent. */
    detach(followerId: number): void {
        for (const turn of this.#running.values()) {
            turn.followers.delete(followerId);
        }
    }

    async #run(turn: HostTurn): Promise<ChatTurnResult> {
        const { workspace } = turn.request;
        const fanOut = (event: TurnEvent): void => {
            if (event.type === "queued") {
                turn.phase = "queued";
                turn.queuePosition = event.position;
            } else if (event.type === "started") {
                turn.phase = "running";
            } else if (event.type === "text") {
                turn.timing.text();
                turn.text += event.text;
            } else {
                turn.toolEvents.push(event);
            }
            for (const follower of [...turn.followers.values()]) {
                follower.send(event);
            }
        };
        let result: TurnResult;
        try {
            const engine = await untilAborted(this.engine(turn.request), turn.controller.signal);
            turn.runner = engine;
            result = await engine.chat(turn.request, fanOut, turn.controller.signal);
        } catch (error) {
            if (!turn.stopped) {
                throw error;
            }
            if (turn.text !== "") {
                await this.#keep(workspace, this.#answer(turn, { content: turn.text, finish: "stopped" }));
            }
            throw new TurnStoppedError(turn.text.length);
        }
        const answer = this.#answer(turn, {
            content: result.text,
            finish: result.finishReason,
            usage: result.usage,
            ...(result.toolCalls === undefined ? {} : { toolCalls: result.toolCalls })
        });
        await this.#keep(workspace, answer);
        return { text: result.text, finishReason: result.finishReason, usage: result.usage, answer };
    }

    /** The answer as kept: its id, its parent, the model that wrote it, stamped now, with the turn's timing. */
    #answer(turn: HostTurn, content: Pick<StoredMessage, "content" | "finish" | "usage" | "toolCalls">): StoredMessage {
        return {
            id: turn.answerId,
            role: "assistant",
            ...content,
            ...answerModel(turn.runner?.info?.modelName),
            ...(turn.answerParent === undefined ? {} : { parent: turn.answerParent }),
            at: Math.round(this.clock.wallMs()),
            ...turn.timing.end()
        };
    }

    /** Keeps the answer; a workspace deleted during its turn has no chat to keep it in, and that is no failure. */
    async #keep(workspace: string, message: StoredMessage): Promise<void> {
        try {
            await this.keep(workspace, message);
        } catch (error) {
            if ((error as { code?: unknown }).code !== "workspace_not_found") {
                throw error;
            }
        }
    }

    #end(turn: HostTurn, done: Promise<ChatTurnResult>): void {
        const { requestId } = turn.request;
        if (this.#running.get(requestId) === turn) {
            this.#running.delete(requestId);
        }
        done.catch(() => undefined); // kept for late attaches; its rejection is each follower's to read
        this.#ended.delete(requestId);
        this.#ended.set(requestId, done);
        for (const old of this.#ended.keys()) {
            if (this.#ended.size <= MAX_ENDED_TURNS) {
                break;
            }
            this.#ended.delete(old);
        }
    }
}

/** The answer's `model` field: the model's name within what the store keeps, or nothing where none is known. */
function answerModel(name: string | undefined): Pick<StoredMessage, "model"> {
    return name === undefined || name === "" ? {} : { model: name.slice(0, MODEL_NAME_MAX_CHARS) };
}
