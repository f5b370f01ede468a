// A workspace's localModel, read from the store where a turn is routed: its turn runs on that model's engine, held for the turn.
import { describe, expect, it } from "vitest";
import type { ChatTurnRequest, EngineClient } from "../../../../contract/engineProtocol.js";
import type { WorkspaceMeta } from "../../../../contract/workspaces.js";
import { Backends } from "../../../../host/backends/Backends.js";
import { routeTurns } from "../../../../host/backends/routeTurns.js";
import type { ModelRouter } from "../../../../host/http/routeModelRequests.js";
import type { PooledEngine } from "../../../../host/supervisor/EnginePool.js";

const meta: WorkspaceMeta = {
    id: "ui-1",
    name: "Notes",
    colour: 0,
    settings: { systemPrompt: "", temperature: 0, maxTokens: 8 },
    localModel: "qwen3:0.6b"
};
const turn = { requestId: "r-1", workspace: "ui-1", messages: [], sampling: { temperature: 0, maxTokens: 8 } } as ChatTurnRequest;

/** An engine that records the turns it ran, by name. */
function engine(name: string, seen: string[]): PooledEngine {
    return { chat: async () => void seen.push(name) } as unknown as PooledEngine;
}

describe("routeTurns and a workspace's own local model", () => {
    it("runs the turn on the chosen model's engine, holding it for the turn only", async () => {
        const seen: string[] = [];
        const events: string[] = [];
        const router: ModelRouter = {
            has: async (id) => id === "qwen3:0.6b",
            acquire: async (id) => {
                events.push(`acquire ${id}`);
                return { engine: engine(id, seen), unloaded: [], release: () => events.push(`release ${id}`) };
            }
        };
        const route = routeTurns(
            async () => engine("own", seen) as EngineClient,
            async () => meta,
            new Backends([]),
            () => router
        );

        await (await route(turn)).chat(turn);

        expect(seen).toEqual(["qwen3:0.6b"]);
        expect(events).toEqual(["acquire qwen3:0.6b", "release qwen3:0.6b"]);
    });

    it("refuses, naming the workspace and the model, when the model is not found or the host runs one model", async () => {
        const nowhere: ModelRouter = { has: async () => false, acquire: () => Promise.reject(new Error("not called")) };
        const own = async (): Promise<EngineClient> => engine("own", []) as EngineClient;

        await expect(
            routeTurns(
                own,
                async () => meta,
                new Backends([]),
                () => nowhere
            )(turn)
        ).rejects.toMatchObject({
            code: "model_not_found",
            message: expect.stringContaining(
                'The workspace "Notes" runs on the local model "qwen3:0.6b", which is not found on this disk now.'
            )
        });
        await expect(routeTurns(own, async () => meta, new Backends([]))(turn)).rejects.toMatchObject({
            code: "model_not_found",
            message: expect.stringContaining("which this host cannot load (it runs one model)")
        });
    });
});
