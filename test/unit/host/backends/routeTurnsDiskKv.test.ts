// A workspace's keepKvOnDisk setting, read from the store where a turn is routed, reaches the engine on each turn; without it none does.
import { describe, expect, it } from "vitest";
import type { ChatTurnRequest, EngineClient } from "../../../../contract/engineProtocol.js";
import type { WorkspaceMeta } from "../../../../contract/workspaces.js";
import { Backends } from "../../../../host/backends/Backends.js";
import { routeTurns } from "../../../../host/backends/routeTurns.js";

function workspace(keepKvOnDisk: boolean | undefined): WorkspaceMeta {
    return {
        id: "ui-1",
        name: "Notes",
        colour: 0,
        settings: { systemPrompt: "", temperature: 0, maxTokens: 8, ...(keepKvOnDisk === undefined ? {} : { keepKvOnDisk }) }
    };
}

async function turnSeenByEngine(meta: WorkspaceMeta | undefined): Promise<ChatTurnRequest> {
    const seen: ChatTurnRequest[] = [];
    const engine = { chat: async (turn: ChatTurnRequest) => void seen.push(turn) } as unknown as EngineClient;
    const route = routeTurns(
        async () => engine,
        async () => meta,
        new Backends([])
    );
    const turn = { requestId: "r-1", workspace: "ui-1", messages: [], sampling: { temperature: 0, maxTokens: 8 } } as ChatTurnRequest;
    await (await route(turn)).chat(turn);
    return seen[0]!;
}

describe("routeTurns and a workspace's KV on disk", () => {
    it("asks the engine to keep the KV on disk for a workspace that opted in", async () => {
        expect((await turnSeenByEngine(workspace(true))).keepKvOnDisk).toBe(true);
    });

    it("asks nothing of the sort when the setting is off, absent, or the workspace is not stored", async () => {
        expect((await turnSeenByEngine(workspace(false))).keepKvOnDisk).toBeUndefined();
        expect((await turnSeenByEngine(workspace(undefined))).keepKvOnDisk).toBeUndefined();
        expect((await turnSeenByEngine(undefined)).keepKvOnDisk).toBeUndefined();
    });
});
