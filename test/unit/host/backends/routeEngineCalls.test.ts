// A workspace's localModel, read from the store where an engine call is routed: its measure runs on that model's engine, held for the call.
import { describe, expect, it } from "vitest";
import type { EngineClient } from "../../../../contract/engineProtocol.js";
import type { WorkspaceMeta } from "../../../../contract/workspaces.js";
import { routeEngineCalls } from "../../../../host/backends/routeEngineCalls.js";
import type { LocalModels } from "../../../../host/http/localModelEntries.js";
import type { ModelRouter } from "../../../../host/http/routeModelRequests.js";
import type { PooledEngine } from "../../../../host/supervisor/EnginePool.js";

const settings = { systemPrompt: "", temperature: 0, maxTokens: 8 };
const workspaces: Record<string, WorkspaceMeta> = {
    chosen: { id: "chosen", name: "Notes", colour: 0, settings, localModel: "qwen3:0.6b" },
    own: { id: "own", name: "Drafts", colour: 1, settings }
};
const measure = (workspace: string) => ({ workspace, messages: [], draft: "hello" });

/** An engine that answers each call with its own name and records it. */
function engine(name: string, seen: string[]): PooledEngine {
    return {
        call: async (method: string) => {
            seen.push(`${name} ${method}`);
            return { engine: name };
        }
    } as unknown as PooledEngine;
}

describe("routeEngineCalls: a workspace's measure runs on the model it chose", () => {
    it("measures a workspace on its chosen model's engine, held for the call; others and engine-wide calls on the host's own", async () => {
        const seen: string[] = [];
        const events: string[] = [];
        const router: ModelRouter & LocalModels = {
            loaded: async () => [],
            available: async () => [],
            has: async (id) => id === "qwen3:0.6b",
            acquire: async (id) => {
                events.push(`acquire ${id}`);
                return { engine: engine(id, seen), unloaded: [], release: () => events.push(`release ${id}`) };
            }
        };
        const call = routeEngineCalls(
            async () => engine("own", seen) as EngineClient,
            async (id) => workspaces[id],
            () => router
        );

        expect(await call("measure", measure("chosen"))).toEqual({ engine: "qwen3:0.6b" });
        expect(await call("measure", measure("own"))).toEqual({ engine: "own" });
        expect(await call("measure", measure("not-kept"))).toEqual({ engine: "own" });
        expect(await call("snapshot", {})).toEqual({ engine: "own" });

        expect(seen).toEqual(["qwen3:0.6b measure", "own measure", "own measure", "own snapshot"]);
        expect(events).toEqual(["acquire qwen3:0.6b", "release qwen3:0.6b"]);
    });

    it("refuses, naming the workspace and the model, when the model is not found or the host runs one model", async () => {
        const own = async (): Promise<EngineClient> => engine("own", []) as EngineClient;
        const nowhere: ModelRouter & LocalModels = {
            loaded: async () => [],
            available: async () => [],
            has: async () => false,
            acquire: () => Promise.reject(new Error("not called"))
        };

        await expect(
            routeEngineCalls(
                own,
                async (id) => workspaces[id],
                () => nowhere
            )("measure", measure("chosen"))
        ).rejects.toMatchObject({
            code: "model_not_found",
            message: expect.stringContaining(
                'The workspace "Notes" runs on the local model "qwen3:0.6b", which is not found on this disk now.'
            )
        });
        await expect(routeEngineCalls(own, async (id) => workspaces[id])("measure", measure("chosen"))).rejects.toMatchObject({
            code: "model_not_found",
            message: expect.stringContaining("which this host cannot load (it runs one model)")
        });
    });
});
