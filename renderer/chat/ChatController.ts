import type { KvaultRpc } from "../rpc/KvaultRpc.js";
import { CANCELLED_CODE, toRpcError } from "../rpc/RpcError.js";
import type { createDraftStore } from "../stores/draftStore.js";
import type { createTurnStore } from "../stores/turnStore.js";
import type { WorkspaceStore } from "../stores/workspaceStore.js";
import { newId } from "../util/newId.js";
import { editMessage, samplingOf, turnTiming } from "./chatEdits.js";
import { conversationMessages } from "./conversationMessages.js";

export interface ChatControllerStores {
    readonly workspaces: WorkspaceStore;
    readonly turns: ReturnType<typeof createTurnStore>;
    readonly drafts: ReturnType<typeof createDraftStore>;
}

/**
 * The chat's actions: send, stop, regenerate, edit and resend, delete a message, switch
 * branches, clear, delete the workspace. Turns run outside React, in the
 * stores, so every workspace keeps streaming while another is on screen. An answer enters the
 * chat only when its turn finished (or the user stopped it, keeping what they saw); an error is
 * kept beside the chat, never in it.
 */
export class ChatController {
    /** Turns in flight, by workspace: settle when the turn ended, however it ended. */
    readonly #running = new Map<string, Promise<void>>();
    /** The message each running turn answers (null: none), by workspace. */
    readonly #parents = new Map<string, string | null>();
    /** Workspaces deleted while the engine could not be told; forgotten on the next connect. */
    readonly #toForget = new Set<string>();
    readonly #unsubscribe: () => void;

    constructor(
        private readonly rpc: KvaultRpc,
        private readonly stores: ChatControllerStores
    ) {
        this.#unsubscribe = rpc.onStatus((status) => {
            if (status.kind === "open") {
                for (const workspace of [...this.#toForget]) {
                    void this.#forget(workspace);
                }
            }
        });
    }

    isRunning(workspace: string): boolean {
        return this.#running.has(workspace);
    }

    /** Adds the user's message and runs a turn on the whole chat. False when a turn is already running there. */
    send(workspace: string, text: string): boolean {
        if (this.#running.has(workspace) || text.trim() === "" || !this.#exists(workspace)) {
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
        if (this.#running.has(workspace) || question?.role !== "user") {
            return false;
        }
        this.#run(workspace, question.id);
        return true;
    }

    /** Edit and resend (chatEdits.ts); false while a turn runs there. */
    editAndResend(workspace: string, messageId: string, text: string): boolean {
        if (this.#running.has(workspace) || !editMessage(this.stores.workspaces, workspace, messageId, text)) {
            return false;
        }
        this.#run(workspace);
        return true;
    }

    /** Deletes one message, or shows another branch; refused (false) while a turn runs there. */
    changeChat(workspace: string, change: { readonly delete: string } | { readonly select: string }): boolean {
        if (this.#running.has(workspace) || !this.#exists(workspace)) {
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

    /** Cancels the workspace's turn; what streamed so far is kept as a stopped answer. */
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
        const answers = answered.messages.at(-1)?.id ?? null;
        const requestId = newId("turn-");
        const turns = this.stores.turns;
        const timing = turnTiming();
        this.#parents.set(workspace, answers);
        turns.getState().begin(workspace, requestId);
        const turn = this.rpc
            .chat(
                {
                    requestId,
                    workspace,
                    messages: conversationMessages(answered),
                    sampling: samplingOf(current.settings)
                },
                {
                    onQueued: (position) => turns.getState().queued(workspace, requestId, position),
                    onStarted: () => turns.getState().started(workspace, requestId),
                    onText: (text) => {
                        timing.text();
                        turns.getState().appendText(workspace, requestId, text);
                    }
                }
            )
            .then(
                (result) => {
                    if (this.#exists(workspace)) {
                        this.stores.workspaces.getState().appendMessage(workspace, {
                            id: newId("m-"),
                            role: "assistant",
                            content: result.text,
                            finish: result.finishReason,
                            usage: result.usage,
                            parent: answers,
                            at: Date.now(),
                            ...timing.end()
                        });
                    }
                    turns.getState().end(workspace, requestId);
                },
                (error: unknown) => {
                    const failure = toRpcError(error);
                    const live = turns.getState().live[workspace];
                    if (live?.phase === "stopping" && failure.code === CANCELLED_CODE) {
                        if (live.text !== "" && this.#exists(workspace)) {
                            this.stores.workspaces.getState().appendMessage(workspace, {
                                id: newId("m-"),
                                role: "assistant",
                                content: live.text,
                                finish: "stopped",
                                parent: answers,
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
                this.#running.delete(workspace);
                this.#parents.delete(workspace);
            });
        this.#running.set(workspace, turn);
    }

    #workspace(workspace: string) {
        return this.stores.workspaces.getState().workspaces.find((item) => item.id === workspace);
    }

    #exists(workspace: string): boolean {
        return this.#workspace(workspace) !== undefined;
    }
}
