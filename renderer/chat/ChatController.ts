import type { ChatTurnResult } from "../../contract/rpc.js";
import type { StoredMessage } from "../../contract/workspaces.js";
import type { KvaultRpc, TurnListener } from "../rpc/KvaultRpc.js";
import { CANCELLED_CODE, clientErrorCodes, STOPPED_CODE, toRpcError } from "../rpc/RpcError.js";
import { useLiveToolCalls } from "../mcp/liveToolCalls.js";
import { keptByHostMessage } from "../stores/hostKeptMessages.js";
import type { createDraftStore } from "../stores/draftStore.js";
import type { createTurnStore } from "../stores/turnStore.js";
import type { WorkspaceStore } from "../stores/workspaceStore.js";
import { newId } from "../util/newId.js";
import { editMessage, samplingOf } from "./chatEdits.js";
import { conversationMessages } from "./conversationMessages.js";

export interface ChatControllerStores {
    readonly workspaces: WorkspaceStore;
    readonly turns: ReturnType<typeof createTurnStore>;
    readonly drafts: ReturnType<typeof createDraftStore>;
}

/** A chat's turn this page follows: the host runs it and keeps its answer as message `answerId`. */
interface FollowedTurn {
    readonly workspace: string;
    readonly requestId: string;
    readonly answerId: string;
    /** The message its answer follows (null: the chat's first); undefined when the host was not told (a turn from before branches). */
    readonly answerParent?: string | null;
}

/**
 * The chat's actions: send, stop, regenerate, edit and resend, delete a message, switch
 * branches, clear, delete the workspace. A turn runs in the host, which keeps its answer in the
 * stored chat when it ends (or what streamed before a Stop), after the message it answers and
 * with its timing, even if this page has gone; the page follows it in the stores, outside React,
 * so every workspace keeps streaming while another is on screen, and mirrors the kept answer into
 * its chat. Whenever the connection opens (a load, a reload, a reconnect) it attaches to the
 * turns the host runs. An error is kept beside the chat, never in it.
 */
export class ChatController {
    /** Turns followed now, by workspace: settle when the turn ended, however it ended. */
    readonly #running = new Map<string, Promise<void>>();
    /** Turns whose connection closed while they ran, by workspace: attached again when it is back. */
    readonly #detached = new Map<string, FollowedTurn>();
    /** The message each followed turn answers (null: none), by workspace. */
    readonly #parents = new Map<string, string | null>();
    /** Workspaces deleted while the engine could not be told; forgotten on the next connect. */
    readonly #toForget = new Set<string>();
    readonly #unsubscribe: () => void;

    constructor(
        private readonly rpc: KvaultRpc,
        private readonly stores: ChatControllerStores
    ) {
        const onOpen = (): void => {
            void this.#attachAll();
            for (const workspace of [...this.#toForget]) {
                void this.#forget(workspace);
            }
        };
        this.#unsubscribe = rpc.onStatus((status) => {
            if (status.kind === "open") {
                onOpen();
            }
        });
        if (rpc.status.kind === "open") {
            onOpen();
        }
    }

    isRunning(workspace: string): boolean {
        return this.#running.has(workspace) || this.#detached.has(workspace);
    }

    /** Adds the user's message and runs a turn on the whole chat. False when a turn is already running there. */
    send(workspace: string, text: string): boolean {
        if (this.isRunning(workspace) || text.trim() === "" || !this.#exists(workspace)) {
            return false;
        }
        const parent = this.#workspace(workspace)?.messages.at(-1)?.id ?? null;
        this.stores.workspaces
            .getState()
            .appendMessage(workspace, { id: newId("m-"), role: "user", content: text, parent, at: Date.now() });
        this.stores.drafts.getState().setDraft(workspace, "");
        this.#run(workspace);
        return true;
    }

    /**
     * Asks the answer again: the turn runs on the chat up to the user's last message, and its
     * answer becomes a branch beside the earlier one, which is kept (‹ › moves between them).
     */
    regenerate(workspace: string): boolean {
        const messages = this.#workspace(workspace)?.messages ?? [];
        const question = messages.at(-1)?.role === "assistant" ? messages.at(-2) : messages.at(-1);
        if (this.isRunning(workspace) || question?.role !== "user") {
            return false;
        }
        this.#run(workspace, question.id);
        return true;
    }

    /** Edit and resend (chatEdits.ts); false while a turn runs there. */
    editAndResend(workspace: string, messageId: string, text: string): boolean {
        if (this.isRunning(workspace) || !editMessage(this.stores.workspaces, workspace, messageId, text)) {
            return false;
        }
        this.#run(workspace);
        return true;
    }

    /** Deletes one message, or shows another branch; refused (false) while a turn runs there. */
    changeChat(workspace: string, change: { readonly delete: string } | { readonly select: string }): boolean {
        if (this.isRunning(workspace) || !this.#exists(workspace)) {
            return false;
        }
        if ("delete" in change) {
            this.stores.workspaces.getState().deleteMessage(workspace, change.delete);
        } else {
            this.stores.workspaces.getState().selectBranch(workspace, change.select);
        }
        return true;
    }

    /** While a turn runs: the message its answer will follow (the chat after it is not shown); undefined when none runs. */
    answerParent(workspace: string): string | null | undefined {
        return this.#parents.get(workspace);
    }

    /** Cancels the workspace's turn (the host's, so from any page); the host keeps what streamed so far as a stopped answer. */
    stop(workspace: string): void {
        const turn = this.stores.turns.getState().live[workspace];
        if (turn === undefined || turn.phase === "stopping") {
            return;
        }
        this.stores.turns.getState().stopping(workspace);
        this.rpc.call("cancel", { requestId: turn.requestId }).catch(() => undefined); // a closed connection cancels it anyway
    }

    /** Empties the chat and drops the workspace's KV in the engine. */
    async clearChat(workspace: string): Promise<void> {
        await this.#endTurn(workspace);
        this.stores.workspaces.getState().clearChat(workspace);
        this.stores.turns.getState().clearFailure(workspace);
        await this.#forget(workspace);
    }

    /** Deletes the workspace: its turn is cancelled, its chat removed, its KV and pages given back. */
    async deleteWorkspace(workspace: string): Promise<void> {
        this.stores.workspaces.getState().remove(workspace);
        this.stores.drafts.getState().forget(workspace);
        await this.#endTurn(workspace);
        this.stores.turns.getState().clearFailure(workspace);
        await this.#forget(workspace);
    }

    dispose(): void {
        this.#unsubscribe();
    }

    async #endTurn(workspace: string): Promise<void> {
        const running = this.#running.get(workspace);
        if (running === undefined) {
            return;
        }
        this.stop(workspace);
        await running;
    }

    async #forget(workspace: string): Promise<void> {
        this.#toForget.add(workspace);
        try {
            await this.rpc.call("forgetWorkspace", { workspace });
            this.#toForget.delete(workspace);
        } catch {
            // Kept in #toForget: retried when the connection is back.
        }
    }

    /** Runs a turn on the chat up to `parent` (default: all of it); its answer follows `parent`. */
    #run(workspace: string, parent?: string): void {
        const current = this.#workspace(workspace)!;
        const upTo = parent === undefined ? current.messages.length : current.messages.findIndex((message) => message.id === parent) + 1;
        const answered = { ...current, messages: current.messages.slice(0, upTo) };
        const turn: FollowedTurn = {
            workspace,
            requestId: newId("turn-"),
            answerId: newId("m-"),
            answerParent: answered.messages.at(-1)?.id ?? null
        };
        this.stores.turns.getState().begin(workspace, turn.requestId);
        this.#follow(
            turn,
            this.rpc.chat(
                {
                    requestId: turn.requestId,
                    answerId: turn.answerId,
                    answerParent: turn.answerParent ?? null,
                    workspace,
                    messages: conversationMessages(answered),
                    sampling: samplingOf(current.settings)
                },
                this.#listener(turn)
            )
        );
    }

    /** Attaches to every chat's turn the host runs that this page does not follow yet, and to those its connection lost. */
    async #attachAll(): Promise<void> {
        const lost = [...this.#detached.values()];
        this.#detached.clear();
        let active: readonly FollowedTurn[];
        try {
            active = await this.rpc.call("activeTurns", {});
        } catch {
            active = []; // the connection closed again: the next open asks again
        }
        const known = new Set(active.map((turn) => turn.requestId));
        for (const turn of [...active, ...lost.filter((item) => !known.has(item.requestId))]) {
            if (this.#running.has(turn.workspace)) {
                continue;
            }
            const { workspace, requestId, answerId, answerParent } = turn;
            this.stores.turns.getState().begin(workspace, requestId);
            this.#follow(
                { workspace, requestId, answerId, ...(answerParent === undefined ? {} : { answerParent }) },
                this.rpc.attach(requestId, this.#listener(turn))
            );
        }
    }

    #listener({ workspace, requestId }: FollowedTurn): TurnListener {
        const turns = this.stores.turns;
        return (event) => {
            switch (event.type) {
                case "queued":
                    return turns.getState().queued(workspace, requestId, event.position);
                case "started":
                    return turns.getState().started(workspace, requestId);
                case "text":
                    return turns.getState().appendText(workspace, requestId, event.text);
                case "tool":
                    return useLiveToolCalls.getState().record(workspace, requestId, event.tool);
            }
        };
    }

    /** Follows `outcome` (a chat's or an attach's) to the turn's end, and mirrors the answer the host kept. */
    #follow(turn: FollowedTurn, outcome: Promise<ChatTurnResult>): void {
        const { workspace, requestId, answerId, answerParent } = turn;
        const turns = this.stores.turns;
        const followed = outcome
            .then(
                (result) => {
                    this.#mirror(
                        workspace,
                        result.answer ?? {
                            id: answerId,
                            role: "assistant",
                            content: result.text,
                            finish: result.finishReason,
                            usage: result.usage,
                            ...(answerParent === undefined ? {} : { parent: answerParent })
                        }
                    );
                    turns.getState().end(workspace, requestId);
                },
                (error: unknown) => {
                    const failure = toRpcError(error);
                    const live = turns.getState().live[workspace];
                    if (failure.code === clientErrorCodes.connectionLost && live?.requestId === requestId) {
                        // The host runs it on: shown as it was until the connection is back and it is attached again.
                        this.#detached.set(workspace, turn);
                    } else if (
                        failure.code === STOPPED_CODE ||
                        failure.code === "turn_not_found" ||
                        (failure.code === CANCELLED_CODE && live?.phase === "stopping")
                    ) {
                        // Stopped (from this page or another): the host kept what streamed, as this page saw it.
                        if (failure.code !== "turn_not_found" && live?.requestId === requestId && live.text !== "") {
                            // The host stamped its copy a moment later, with the timing; a reload shows that one.
                            this.#mirror(workspace, {
                                id: answerId,
                                role: "assistant",
                                content: live.text,
                                finish: "stopped",
                                ...(answerParent === undefined ? {} : { parent: answerParent }),
                                at: Date.now()
                            });
                        }
                        turns.getState().end(workspace, requestId);
                    } else {
                        turns.getState().end(workspace, requestId, { code: failure.code, message: failure.message });
                    }
                }
            )
            .finally(() => {
                if (!this.#detached.has(workspace)) {
                    useLiveToolCalls.getState().end(workspace, requestId);
                }
                if (this.#running.get(workspace) === followed) {
                    this.#running.delete(workspace);
                    if (!this.#detached.has(workspace)) {
                        this.#parents.delete(workspace);
                    }
                }
            });
        this.#running.set(workspace, followed);
        if (answerParent !== undefined) {
            this.#parents.set(workspace, answerParent);
        }
    }

    /** Adds an answer the host kept to the page's chat, unless the chat has it already (loaded after the turn ended). */
    #mirror(workspace: string, message: StoredMessage): void {
        const chat = this.#workspace(workspace);
        if (chat !== undefined && ![...chat.messages, ...(chat.branches ?? [])].some((item) => item.id === message.id)) {
            this.stores.workspaces.getState().appendMessage(workspace, keptByHostMessage(message));
        }
    }

    #workspace(workspace: string) {
        return this.stores.workspaces.getState().workspaces.find((item) => item.id === workspace);
    }

    #exists(workspace: string): boolean {
        return this.#workspace(workspace) !== undefined;
    }
}
