// The one server loop of the renderer's RPC, for both hosts: Electron main hands it each IPC call
// (main/ipc/registerIpcHandlers.ts), the headless server each WebSocket message (RpcServer.ts).
// Pure (no electron, no sockets), so it is tested alone with fake callers.
import type { EngineCaller } from "../backends/routeEngineCalls.js";
import type { ChatTurnRequest, EngineClient } from "../../contract/engineProtocol.js";
import type { TurnRunner } from "../backends/routeTurns.js";
import type { EngineMethod, RpcAnswer, RpcMethod, RpcParams } from "../../contract/rpc.js";
import { parseRpcCall, type RpcCall } from "../../contract/rpc/parseRpcCall.js";
import { rpcSpec } from "../../contract/rpc/rpcSpec.js";
import type { StoredMessage } from "../../contract/workspaces.js";
import { InvalidRequestError } from "../../engine/index.js";
import type { CallContext, HostImplementations } from "./hostMethods.js";
import { HostTurns } from "./HostTurns.js";
import type { TurnEvent } from "../../contract/turnEvents.js";
import { toErrorAnswer } from "./toErrorAnswer.js";
import { untilAborted } from "./untilAborted.js";

/** One renderer (a webContents, a WebSocket): turn events go to it, and only to it. */
export interface RpcCaller {
    /** Stable for the caller's life (webContents.id, a socket's number). */
    readonly id: number;
    /** Must not throw for a caller that has gone away; events for it are dropped. */
    send(event: TurnEvent): void;
}

interface CallerState {
    /** Its running turns by requestId. */
    readonly turns: Map<string, AbortController>;
    /** Aborted when the caller goes away. */
    readonly gone: AbortController;
}

/**
 * Serves each call of a caller: checks it against the RPC spec (once: nothing behind this checks
 * the params again), then hands an engine method to the engine (waiting for it while it starts)
 * and a host method to the host's implementations, and answers with an RpcAnswer, never a
 * rejection. A chat's turn (one with an answerId) is the host's (HostTurns): it runs on when its
 * caller goes away, keeps its answer in the stored chat, and any caller can follow or stop it.
 * Any other turn is its caller's own: only it can cancel it, only it hears its events, and
 * `closeCaller` (its window closed or reloaded, its socket closed) cancels them all, which frees
 * their pages.
 */
export class RpcDispatcher {
    readonly #callers = new Map<number, CallerState>();
    readonly #hostTurns: HostTurns;

    /** `engine` resolves once the engine is ready, or rejects with why it could not start. */
    /** `chatTurns` runs a chat's turn (one with an answerId): the engine unless given (host/backends/routeTurns.ts routes by workspace). */
    /** `engineCalls` runs the other engine methods: the engine unless given (host/backends/routeEngineCalls.ts routes a workspace's measure). */
    constructor(
        private readonly engine: () => Promise<EngineClient>,
        private readonly host: HostImplementations,
        chatTurns: (request: ChatTurnRequest) => Promise<TurnRunner> = engine,
        private readonly engineCalls: EngineCaller = async (method, params) => (await engine()).call(method, params)
    ) {
        this.#hostTurns = new HostTurns(chatTurns, (workspace, message) => this.#keepAnswer(workspace, message));
    }

    async call(caller: RpcCaller, method: unknown, params: unknown): Promise<RpcAnswer> {
        try {
            const parsed = parseRpcCall(method, params);
            if (!parsed.ok) {
                throw new InvalidRequestError(parsed.message);
            }
            return { ok: true, value: await this.#run(caller, parsed.call) };
        } catch (error) {
            return { ok: false, error: toErrorAnswer(error) };
        }
    }

    /** Cancels every turn the caller has running and drops what it left unfinished; idempotent. */
    closeCaller(callerId: number): void {
        const state = this.#callers.get(callerId);
        this.#callers.delete(callerId);
        for (const controller of state?.turns.values() ?? []) {
            controller.abort();
        }
        state?.gone.abort();
        this.#hostTurns.detach(callerId);
    }

    /** Turns running for this caller (not the chats' turns, which are the host's); for tests and diagnostics. */
    numTurns(callerId: number): number {
        return this.#callers.get(callerId)?.turns.size ?? 0;
    }

    async #run(caller: RpcCaller, call: RpcCall): Promise<unknown> {
        switch (call.method) {
            case "chat":
                return this.#chat(caller, call.params);
            case "cancel": {
                // No engine wait: a turn that exists already has one, and cancelling none needs none.
                const controller = this.#callers.get(caller.id)?.turns.get(call.params.requestId);
                controller?.abort();
                return { cancelled: controller !== undefined || this.#hostTurns.cancel(call.params.requestId) };
            }
            case "activeTurns":
                return this.#hostTurns.list();
            case "attachTurn":
                return this.#hostTurns.attach(caller, call.params.requestId);
        }
        if (isEngineMethod(call.method)) {
            return this.engineCalls(call.method, call.params as RpcParams<EngineMethod>);
        }
        const context: CallContext = { callerId: caller.id, callerGone: this.#state(caller.id).gone.signal };
        const serve = this.host[call.method] as (params: unknown, context: CallContext) => unknown;
        return serve(call.params, context);
    }

    async #chat(
        caller: RpcCaller,
        params: ChatTurnRequest & { readonly answerId?: string; readonly answerParent?: string | null }
    ): Promise<unknown> {
        const { answerId, answerParent, ...request } = params;
        const { requestId } = request;
        const { turns } = this.#state(caller.id);
        if (answerId !== undefined && !turns.has(requestId)) {
            return this.#hostTurns.start(caller, request, answerId, answerParent);
        }
        if (turns.has(requestId) || this.#hostTurns.has(requestId)) {
            throw new InvalidRequestError(
                `A turn with requestId ${JSON.stringify(requestId)} is already running for this caller; give each turn its own id.`
            );
        }
        // Registered before the engine wait, so a turn cancelled while the engine starts never runs.
        const controller = new AbortController();
        turns.set(requestId, controller);
        try {
            const engine = await untilAborted(this.engine(), controller.signal);
            return await engine.chat(request, (event) => caller.send(event), controller.signal);
        } finally {
            // Only this turn's entry: after closeCaller the caller's state may be a newer one.
            const current = this.#callers.get(caller.id);
            if (current?.turns.get(requestId) === controller) {
                current.turns.delete(requestId);
            }
        }
    }

    /** A chat's answer into its stored chat, checked as an appendMessage call from a page is. */
    async #keepAnswer(workspace: string, message: StoredMessage): Promise<void> {
        const parsed = parseRpcCall("appendMessage", { workspace, message });
        if (!parsed.ok || parsed.call.method !== "appendMessage") {
            throw new InvalidRequestError(`The answer could not be kept in the chat of ${workspace}: ${parsed.ok ? "" : parsed.message}`);
        }
        await this.host.appendMessage(parsed.call.params, hostContext);
    }

    #state(callerId: number): CallerState {
        let state = this.#callers.get(callerId);
        if (state === undefined) {
            state = { turns: new Map(), gone: new AbortController() };
            this.#callers.set(callerId, state);
        }
        return state;
    }
}

/** The context of a call the host makes itself (keeping an answer): no caller, never gone. */
const hostContext: CallContext = { callerId: 0, callerGone: new AbortController().signal };

function isEngineMethod(method: RpcMethod): method is EngineMethod {
    return rpcSpec[method].serve === "engine" && method !== "chat";
}
