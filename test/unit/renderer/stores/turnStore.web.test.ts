import { describe, expect, it } from "vitest";
import { createTurnStore } from "../../../../renderer/stores/turnStore.js";

describe("turnStore", () => {
    it("follows a turn from sending through queued and running to its end", () => {
        const store = createTurnStore();
        store.getState().begin("w", "r1");
        expect(store.getState().live.w).toEqual({ requestId: "r1", phase: "sending", text: "" });
        store.getState().queued("w", "r1", 2);
        expect(store.getState().live.w).toMatchObject({ phase: "queued", queuePosition: 2 });
        store.getState().started("w", "r1");
        store.getState().appendText("w", "r1", "Hel");
        store.getState().appendText("w", "r1", "lo");
        expect(store.getState().live.w).toEqual({ requestId: "r1", phase: "running", text: "Hello" });
        store.getState().end("w", "r1");
        expect(store.getState().live).toEqual({});
    });

    it("ignores events of a turn that is not the workspace's current one", () => {
        const store = createTurnStore();
        store.getState().begin("w", "r2");
        store.getState().appendText("w", "r1", "stale");
        store.getState().end("w", "r1", { code: "x", message: "stale" });
        expect(store.getState().live.w).toEqual({ requestId: "r2", phase: "sending", text: "" });
        expect(store.getState().failures).toEqual({});
    });

    it("keeps a failure beside the chat until the next turn begins or it is dismissed", () => {
        const store = createTurnStore();
        store.getState().begin("w", "r1");
        store.getState().end("w", "r1", { code: "engine_crashed", message: "The engine process stopped." });
        expect(store.getState().failures.w?.code).toBe("engine_crashed");
        store.getState().begin("w", "r2");
        expect(store.getState().failures.w).toBeUndefined();
        store.getState().end("w", "r2", { code: "x", message: "y" });
        store.getState().clearFailure("w");
        expect(store.getState().failures).toEqual({});
    });

    it("stays stopping once Stop was pressed, even if the start arrives after", () => {
        const store = createTurnStore();
        store.getState().begin("w", "r1");
        store.getState().stopping("w");
        store.getState().started("w", "r1");
        store.getState().queued("w", "r1", 1);
        expect(store.getState().live.w?.phase).toBe("stopping");
    });

    it("keeps workspaces apart", () => {
        const store = createTurnStore();
        store.getState().begin("a", "ra");
        store.getState().begin("b", "rb");
        store.getState().appendText("a", "ra", "for a");
        store.getState().appendText("b", "rb", "for b");
        expect(store.getState().live.a?.text).toBe("for a");
        expect(store.getState().live.b?.text).toBe("for b");
    });
});
