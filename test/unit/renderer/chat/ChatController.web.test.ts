import { beforeEach, describe, expect, it } from "vitest";
import { ChatController } from "../../../../renderer/chat/ChatController.js";
import { createDraftStore } from "../../../../renderer/stores/draftStore.js";
import { createTurnStore } from "../../../../renderer/stores/turnStore.js";
import { createWorkspaceStore } from "../../../../renderer/stores/workspaceStore.js";
import { FakeRpc, settle, usage } from "../FakeRpc.js";

describe("ChatController", () => {
    let rpc: FakeRpc;
    let stores: {
        workspaces: ReturnType<typeof createWorkspaceStore>;
        turns: ReturnType<typeof createTurnStore>;
        drafts: ReturnType<typeof createDraftStore>;
    };
    let chat: ChatController;
    let workspace: string;
    const messagesOf = (id: string) => stores.workspaces.getState().workspaces.find((item) => item.id === id)?.messages ?? [];

    beforeEach(() => {
        rpc = new FakeRpc();
        rpc.answers.cancel = () => ({ cancelled: true });
        rpc.answers.forgetWorkspace = () => ({});
        stores = { workspaces: createWorkspaceStore(), turns: createTurnStore(), drafts: createDraftStore() };
        chat = new ChatController(rpc, stores);
        workspace = stores.workspaces.getState().create().id;
        stores.workspaces.getState().updateSettings(workspace, { systemPrompt: "Be brief.", temperature: 0.2, maxTokens: 32 });
    });

    it("sends the whole history with the system prompt and settings, streams, and stores the answer when it finishes", async () => {
        stores.drafts.getState().setDraft(workspace, "hello");
        expect(chat.send(workspace, "hello")).toBe(true);
        expect(stores.drafts.getState().drafts[workspace]).toBe("");
        const turn = rpc.turns[0]!;
        expect(turn.request).toMatchObject({
            workspace,
            messages: [
                { role: "system", content: "Be brief." },
                { role: "user", content: "hello" }
            ],
            sampling: { temperature: 0.2, maxTokens: 32 }
        });
        turn.listener({ type: "started", requestId: turn.request.requestId });
        turn.listener({ type: "text", requestId: turn.request.requestId, text: "Hi " });
        turn.listener({ type: "text", requestId: turn.request.requestId, text: "there" });
        expect(stores.turns.getState().live[workspace]).toMatchObject({ phase: "running", text: "Hi there" });
        expect(messagesOf(workspace)).toHaveLength(1);

        turn.finish({ text: "Hi there", finishReason: "stop", usage });
        await settle();
        expect(messagesOf(workspace).map((message) => [message.role, message.content, message.finish])).toEqual([
            ["user", "hello", undefined],
            ["assistant", "Hi there", "stop"]
        ]);
        // The host keeps the answer under the id the turn named; the page's chat mirrors it.
        expect(messagesOf(workspace)[1]!.id).toBe(turn.request.answerId);
        expect(turn.request.answerId).toMatch(/^m-/);
        expect(stores.turns.getState().live[workspace]).toBeUndefined();

        chat.send(workspace, "and then?");
        expect(rpc.turns[1]!.request.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "user"]);
    });

    it("runs one turn per workspace at a time, and workspaces side by side", () => {
        const other = stores.workspaces.getState().create().id;
        expect(chat.send(workspace, "one")).toBe(true);
        expect(chat.send(workspace, "two")).toBe(false);
        expect(chat.send(other, "three")).toBe(true);
        expect(rpc.turns.map((turn) => turn.request.workspace)).toEqual([workspace, other]);
        rpc.turns[0]!.listener({ type: "text", requestId: rpc.turns[0]!.request.requestId, text: "A" });
        rpc.turns[1]!.listener({ type: "text", requestId: rpc.turns[1]!.request.requestId, text: "B" });
        expect(stores.turns.getState().live[workspace]?.text).toBe("A");
        expect(stores.turns.getState().live[other]?.text).toBe("B");
    });

    it("never stores an error as an answer: the partial text is dropped, the failure kept beside the chat, the user's message kept", async () => {
        chat.send(workspace, "hello");
        rpc.turns[0]!.listener({ type: "text", requestId: rpc.turns[0]!.request.requestId, text: "partial" });
        rpc.turns[0]!.fail(
            "engine_crashed",
            "The engine process stopped (SIGKILL) while this turn ran. It restarts by itself; send your message again."
        );
        await settle();
        expect(messagesOf(workspace).map((message) => message.role)).toEqual(["user"]);
        expect(stores.turns.getState().failures[workspace]).toEqual({
            code: "engine_crashed",
            message: expect.stringMatching(/send your message again/)
        });

        expect(chat.regenerate(workspace)).toBe(true); // Retry: the same history again
        expect(stores.turns.getState().failures[workspace]).toBeUndefined();
        expect(rpc.turns[1]!.request.messages.at(-1)).toEqual({ role: "user", content: "hello" });
    });

    it("on Stop, cancels the turn and keeps what streamed as a stopped answer", async () => {
        chat.send(workspace, "hello");
        const turn = rpc.turns[0]!;
        turn.listener({ type: "text", requestId: turn.request.requestId, text: "so far" });
        chat.stop(workspace);
        expect(stores.turns.getState().live[workspace]?.phase).toBe("stopping");
        expect(rpc.calls.at(-1)).toEqual({ method: "cancel", params: { requestId: turn.request.requestId } });
        turn.fail("request_cancelled", "The request was cancelled during decoding.");
        await settle();
        expect(messagesOf(workspace).at(-1)).toMatchObject({ role: "assistant", content: "so far", finish: "stopped" });
        expect(stores.turns.getState().failures[workspace]).toBeUndefined();
    });

    it("a Stop from another page (turn_stopped) ends the turn with what streamed as a stopped answer", async () => {
        chat.send(workspace, "hello");
        rpc.turns[0]!.listener({ type: "text", requestId: rpc.turns[0]!.request.requestId, text: "so far" });
        rpc.turns[0]!.fail("turn_stopped", "The answer was stopped; the 6 characters written before the Stop are kept in the chat.");
        await settle();
        expect(messagesOf(workspace).at(-1)).toMatchObject({ role: "assistant", content: "so far", finish: "stopped" });
        expect(stores.turns.getState().failures[workspace]).toBeUndefined();
        expect(chat.isRunning(workspace)).toBe(false);
    });

    it("attaches at start to the chats' turns the host runs, streams them on, and mirrors the kept answer once", async () => {
        rpc.answers.activeTurns = () => [{ requestId: "turn-x", workspace, answerId: "m-x", phase: "running", numChars: 5 }];
        const page = new ChatController(rpc, stores);
        await settle();
        expect(rpc.attached.map((turn) => turn.requestId)).toEqual(["turn-x"]);
        expect(page.isRunning(workspace)).toBe(true);
        expect(page.send(workspace, "another")).toBe(false);
        rpc.attached[0]!.listener({ type: "started", requestId: rpc.attached[0]!.requestId });
        rpc.attached[0]!.listener({ type: "text", requestId: rpc.attached[0]!.requestId, text: "Hello" });
        rpc.attached[0]!.listener({ type: "text", requestId: rpc.attached[0]!.requestId, text: " again" });
        expect(stores.turns.getState().live[workspace]).toMatchObject({ requestId: "turn-x", phase: "running", text: "Hello again" });
        rpc.attached[0]!.finish({ text: "Hello again", finishReason: "length", usage });
        await settle();
        expect(messagesOf(workspace).map((message) => [message.id, message.content, message.finish])).toEqual([
            ["m-x", "Hello again", "length"]
        ]);
        expect(page.isRunning(workspace)).toBe(false);
        page.dispose();
    });

    it("keeps showing a turn whose connection closed, and attaches to it again when the connection is back", async () => {
        rpc.answers.activeTurns = () => [];
        chat.send(workspace, "hello");
        const turn = rpc.turns[0]!;
        turn.listener({ type: "text", requestId: turn.request.requestId, text: "Hi" });
        rpc.setStatus({ kind: "reconnecting", attempt: 1 });
        turn.fail("connection_lost", "The connection to the Kvault server closed before it answered.");
        await settle();
        expect(stores.turns.getState().live[workspace]?.text).toBe("Hi");
        expect(stores.turns.getState().failures[workspace]).toBeUndefined();
        expect(chat.isRunning(workspace)).toBe(true);

        rpc.answers.activeTurns = () => [
            {
                requestId: turn.request.requestId,
                workspace,
                answerId: turn.request.answerId!,
                phase: "running",
                numChars: 2
            }
        ];
        rpc.setStatus({ kind: "open" });
        await settle();
        expect(rpc.attached.map((attached) => attached.requestId)).toEqual([turn.request.requestId]);
        rpc.attached[0]!.listener({ type: "text", requestId: rpc.attached[0]!.requestId, text: "Hi there" });
        expect(stores.turns.getState().live[workspace]?.text).toBe("Hi there");
        rpc.attached[0]!.finish({ text: "Hi there", finishReason: "stop", usage });
        await settle();
        expect(messagesOf(workspace).map((message) => [message.role, message.content])).toEqual([
            ["user", "hello"],
            ["assistant", "Hi there"]
        ]);
    });

    it("treats a cancellation the user did not ask for as a failure", async () => {
        chat.send(workspace, "hello");
        rpc.turns[0]!.listener({ type: "text", requestId: rpc.turns[0]!.request.requestId, text: "so far" });
        rpc.turns[0]!.fail("request_cancelled", "The request was cancelled.");
        await settle();
        expect(messagesOf(workspace).map((message) => message.role)).toEqual(["user"]);
        expect(stores.turns.getState().failures[workspace]?.code).toBe("request_cancelled");
    });

    it("regenerates on the chat up to the question, keeping the earlier answer as a branch", async () => {
        chat.send(workspace, "hello");
        rpc.turns[0]!.finish({ text: "first", finishReason: "stop", usage });
        await settle();
        const [question, first] = messagesOf(workspace);
        expect(chat.regenerate(workspace)).toBe(true);
        expect(rpc.turns[1]!.request.messages.map((message) => message.content)).toEqual(["Be brief.", "hello"]);
        expect(chat.answerParent(workspace)).toBe(question!.id);
        expect(rpc.turns[1]!.request.answerParent).toBe(question!.id); // the host keeps the answer after the question
        rpc.turns[1]!.finish({ text: "second", finishReason: "length", usage });
        await settle();
        expect(messagesOf(workspace).map((message) => [message.content, message.finish])).toEqual([
            ["hello", undefined],
            ["second", "length"]
        ]);
        expect(stores.workspaces.getState().workspaces[0]!.branches).toEqual([{ ...first, parent: question!.id }]);
        expect(chat.changeChat(workspace, { select: first!.id })).toBe(true);
        expect(messagesOf(workspace).map((message) => message.content)).toEqual(["hello", "first"]);
    });

    it("edits a sent message and asks again: the new text is a new version, the old one and its answer stay as a branch", async () => {
        chat.send(workspace, "hello");
        rpc.turns[0]!.finish({ text: "first", finishReason: "stop", usage });
        await settle();
        const [question] = messagesOf(workspace);
        expect(chat.editAndResend(workspace, question!.id, "hello")).toBe(false); // unchanged
        expect(chat.editAndResend(workspace, question!.id, "hi there")).toBe(true);
        expect(chat.changeChat(workspace, { delete: question!.id })).toBe(false); // not while a turn runs
        expect(rpc.turns[1]!.request.messages.map((message) => message.content)).toEqual(["Be brief.", "hi there"]);
        rpc.turns[1]!.listener({ type: "text", requestId: rpc.turns[1]!.request.requestId, text: "again" });
        const edited = messagesOf(workspace)[0]!;
        expect(rpc.turns[1]!.request.answerParent).toBe(edited.id);
        // The page mirrors the answer exactly as the host kept it: its id, parent, stamp and timing.
        const kept = {
            id: rpc.turns[1]!.request.answerId!,
            role: "assistant" as const,
            content: "again",
            finish: "stop" as const,
            usage,
            parent: edited.id,
            at: 1_700_000_000_000,
            timing: { firstTokenMs: 40, totalMs: 90 }
        };
        rpc.turns[1]!.finish({ text: "again", finishReason: "stop", usage, answer: kept });
        await settle();
        expect(messagesOf(workspace).map((message) => message.content)).toEqual(["hi there", "again"]);
        expect(messagesOf(workspace)[1]).toEqual(kept);
        expect(chat.changeChat(workspace, { select: question!.id })).toBe(true);
        expect(messagesOf(workspace).map((message) => message.content)).toEqual(["hello", "first"]);
    });

    it("deletes a workspace: cancels its turn, stores nothing more, forgets its KV in the engine", async () => {
        chat.send(workspace, "hello");
        const turn = rpc.turns[0]!;
        const deleted = chat.deleteWorkspace(workspace);
        expect(stores.workspaces.getState().workspaces).toEqual([]);
        turn.fail("request_cancelled", "cancelled");
        await deleted;
        expect(rpc.calls.map((call) => call.method)).toEqual(["activeTurns", "chat", "cancel", "forgetWorkspace"]);
        expect(rpc.calls.at(-1)?.params).toEqual({ workspace });
        expect(stores.turns.getState().live).toEqual({});
    });

    it("forgets a deleted workspace on the next connect when the engine could not be told", async () => {
        rpc.setStatus({ kind: "reconnecting", attempt: 1 });
        await chat.deleteWorkspace(workspace);
        expect(rpc.calls.filter((call) => call.method === "forgetWorkspace")).toHaveLength(1);
        rpc.setStatus({ kind: "open" });
        await settle();
        expect(rpc.calls.filter((call) => call.method === "forgetWorkspace")).toHaveLength(2);
        rpc.setStatus({ kind: "open" });
        await settle();
        expect(rpc.calls.filter((call) => call.method === "forgetWorkspace")).toHaveLength(2);
    });
});
