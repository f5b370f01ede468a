import { describe, expect, it } from "vitest";
import type { StoredMessage } from "../../../../contract/workspaces.js";
import { HostTurns, MAX_ENDED_TURNS, type TurnClock } from "../../../../host/rpc/HostTurns.js";
import { WorkspaceNotFoundError } from "../../../../host/store/storeErrors.js";
import { useTempStore, userMessage, workspaceA } from "../store/storeFixtures.js";
import { EngineRequestError } from "../../../../host/supervisor/engineHostErrors.js";
import { caller, fakeEngine, result, settle, turn } from "./rpcDispatcherFakes.js";

// The turn logic alone, over a fake engine and a recorded keep; the real engine, server and store
// are test/model/host/hostTurns.test.ts's and test/e2e/turnReload.test.ts's (and, below, the real
// store on a temporary data directory).

/** The wall clock stands still at AT; the monotonic one steps 10 ms each time it is read. */
const AT = 1_700_000_000_000;
function steppingClock(): TurnClock {
    let ms = 0;
    return { wallMs: () => AT, monotonicMs: () => (ms += 10) };
}

function hostTurns(keep: (workspace: string, message: StoredMessage) => Promise<void> = async () => undefined) {
    const engine = fakeEngine();
    const kept: [string, StoredMessage][] = [];
    const turns = new HostTurns(
        async () => engine,
        async (workspace, message) => {
            await keep(workspace, message);
            kept.push([workspace, message]);
        },
        steppingClock()
    );
    return { engine, kept, turns };
}

const temp = useTempStore();

describe("HostTurns, the chats' turns the host owns", () => {
    it("runs on when its starter goes away; a new follower hears its state and text so far at once, then the rest", async () => {
        const { engine, kept, turns } = hostTurns();
        const page = caller(1);
        const done = turns.start(page, turn("r1"), "m-1", "m-0");
        await settle();
        const running = engine.turns.get("r1")!;
        running.started();
        running.text("Hel");
        turns.detach(page.id);
        running.text("lo");
        expect(running.signal.aborted).toBe(false);
        expect(turns.list()).toEqual([
            { requestId: "r1", workspace: "alice", answerId: "m-1", answerParent: "m-0", phase: "running", numChars: 5 }
        ]);

        const reloaded = caller(2);
        const attached = turns.attach(reloaded, "r1");
        running.text("!");
        running.finish({ ...result, text: "Hello!" });
        // Kept after m-0, stamped at its end, timed from its start (10) to its first text (20) and its end (30).
        const answer: StoredMessage = {
            id: "m-1",
            role: "assistant",
            content: "Hello!",
            finish: "stop",
            usage: result.usage,
            parent: "m-0",
            at: AT,
            timing: { firstTokenMs: 10, totalMs: 20 },
            model: "tiny" // the engine's info.modelName: the model that wrote it
        };
        expect(await attached).toEqual({ ...result, text: "Hello!", answer });
        expect(await done).toEqual({ ...result, text: "Hello!", answer });
        expect(page.events.map((event) => event.type)).toEqual(["started", "text"]);
        expect(reloaded.events).toEqual([
            { type: "started", requestId: "r1" },
            { type: "text", requestId: "r1", text: "Hello" },
            { type: "text", requestId: "r1", text: "!" }
        ]);
        expect(kept).toEqual([["alice", answer]]);
        expect(turns.list()).toEqual([]);
        // Just after the end, an attach answers at once; an unknown turn is turn_not_found.
        expect(await turns.attach(caller(3), "r1")).toEqual({ ...result, text: "Hello!", answer });
        await expect(turns.attach(caller(3), "r9")).rejects.toMatchObject({ code: "turn_not_found" });
    });

    it("announces the end only once the answer is kept", async () => {
        let release!: () => void;
        const { engine, turns } = hostTurns(() => new Promise<void>((resolve) => (release = resolve)));
        let ended = false;
        const done = turns.start(caller(1), turn("r1"), "m-1").then(() => (ended = true));
        await settle();
        engine.turns.get("r1")!.finish(result);
        await settle();
        expect(ended).toBe(false);
        release();
        await done;
        expect(ended).toBe(true);
    });

    it("stops from any follower, keeps what streamed as stopped, and ends with turn_stopped", async () => {
        const { engine, kept, turns } = hostTurns();
        const done = turns.start(caller(1), turn("r1"), "m-1");
        await settle();
        engine.turns.get("r1")!.text("so far");
        expect(turns.cancel("r1")).toBe(true);
        await expect(done).rejects.toMatchObject({ code: "turn_stopped", message: expect.stringContaining("the 6 characters") });
        // Named no parent: it follows the chat's last message. Timed to the Stop, as it has text.
        expect(kept).toEqual([
            [
                "alice",
                {
                    id: "m-1",
                    role: "assistant",
                    content: "so far",
                    finish: "stopped",
                    at: AT,
                    timing: { firstTokenMs: 10, totalMs: 20 },
                    model: "tiny"
                }
            ]
        ]);
        expect(turns.cancel("r1")).toBe(false);
    });

    it("keeps nothing of a turn that fails, nor of one stopped before any text", async () => {
        const { engine, kept, turns } = hostTurns();
        const failed = turns.start(caller(1), turn("r1"), "m-1");
        const stopped = turns.start(caller(1), turn("r2", "bob"), "m-2");
        await settle();
        engine.turns.get("r1")!.text("partial");
        engine.turns.get("r1")!.fail(new EngineRequestError({ code: "engine_crashed", message: "The engine stopped." }));
        turns.cancel("r2");
        await expect(failed).rejects.toMatchObject({ code: "engine_crashed" });
        await expect(stopped).rejects.toMatchObject({ code: "turn_stopped", message: expect.stringMatching(/nothing was added/) });
        expect(kept).toEqual([]);
    });

    it("answers a turn whose workspace was deleted meanwhile, and fails one whose answer cannot be written", async () => {
        const { engine, turns } = hostTurns(async (workspace) => {
            throw workspace === "alice"
                ? new WorkspaceNotFoundError(workspace)
                : Object.assign(new Error("disk full"), { code: "store_write_failed" });
        });
        const gone = turns.start(caller(1), turn("r1"), "m-1");
        const unwritable = turns.start(caller(1), turn("r2", "bob"), "m-2");
        await settle();
        engine.turns.get("r1")!.finish(result);
        engine.turns.get("r2")!.finish(result);
        expect(await gone).toMatchObject(result);
        await expect(unwritable).rejects.toMatchObject({ code: "store_write_failed" });
    });

    it("refuses a requestId already running, and remembers only the last ended turns", async () => {
        const { engine, turns } = hostTurns();
        void turns.start(caller(1), turn("r0"), "m-0");
        expect(() => turns.start(caller(2), turn("r0"), "m-x")).toThrow(/already running/);
        await settle();
        engine.turns.get("r0")!.finish(result);
        for (let index = 1; index <= MAX_ENDED_TURNS; index++) {
            const done = turns.start(caller(1), turn(`r${index}`), `m-${index}`);
            await settle();
            engine.turns.get(`r${index}`)!.finish(result);
            await done;
        }
        await expect(turns.attach(caller(3), "r0")).rejects.toMatchObject({ code: "turn_not_found" });
        expect(await turns.attach(caller(3), "r1")).toMatchObject(result);
    });

    it("keeps a regenerated answer after its question, beside the earlier answer, with the model that wrote it, in the real store across a reopen", async () => {
        const store = await temp.open();
        await store.saveWorkspace(workspaceA);
        await store.appendMessage(workspaceA.id, { ...userMessage("m-1"), parent: null, at: 1 });
        await store.appendMessage(workspaceA.id, { id: "m-2", role: "assistant", content: "First.", finish: "stop", parent: "m-1", at: 2 });
        const engine = fakeEngine();
        const turns = new HostTurns(
            async () => engine,
            (workspace, message) => store.appendMessage(workspace, message),
            steppingClock()
        );
        // Regenerate: the turn answers the question m-1, not the chat's last message m-2.
        const done = turns.start(caller(1), turn("r1", workspaceA.id), "m-3", "m-1");
        await settle();
        engine.turns.get("r1")!.text("Again.");
        engine.turns.get("r1")!.finish({ ...result, text: "Again." });
        const { answer } = await done;
        await store.close();

        const reopened = await temp.open();
        const chat = (await reopened.load()).workspaces[0]!;
        await reopened.close();
        expect(chat.messages).toEqual([{ ...userMessage("m-1"), parent: null, at: 1 }, answer]);
        expect(answer).toEqual({
            id: "m-3",
            role: "assistant",
            content: "Again.",
            finish: "stop",
            usage: result.usage,
            parent: "m-1",
            at: AT,
            timing: { firstTokenMs: 10, totalMs: 20 },
            model: "tiny"
        });
        // The earlier answer, kept before answers recorded their model, reads as it was written.
        expect(chat.branches).toEqual([{ id: "m-2", role: "assistant", content: "First.", finish: "stop", parent: "m-1", at: 2 }]);
    });
});
