// Where a chat's turn runs: on this computer's engine, or on the backend its workspace names
// (WorkspaceMeta.backend). The host's turn runner (host/rpc/HostTurns.ts) asks this once per turn,
// of the backends in force then (the settings screen may have added or removed one since).
import type { ChatTurnRequest, EngineClient } from "../../contract/engineProtocol.js";
import type { WorkspaceMeta } from "../../contract/workspaces.js";
import type { Backends } from "./Backends.js";
import { BackendNotFoundError } from "./backendErrors.js";

/** What runs a turn: the engine, or a backend's model. */
export type TurnRunner = Pick<EngineClient, "chat">;

/** A workspace's stored entry, or undefined when the store has none by that id (a turn of the API or a test). */
export type FindWorkspace = (id: string) => Promise<WorkspaceMeta | undefined>;

export function routeTurns(
    engine: () => Promise<EngineClient>,
    findWorkspace: FindWorkspace,
    backends: Backends
): (request: ChatTurnRequest) => Promise<TurnRunner> {
    return async (request) => {
        const meta = await findWorkspace(request.workspace);
        const chosen = meta?.backend;
        if (chosen === undefined) {
            const local = await engine();
            // the workspace's setting, read where the store is: the engine keeps its KV on disk for this turn's workspace
            return meta?.settings.keepKvOnDisk === true
                ? { chat: (turn, callbacks, signal) => local.chat({ ...turn, keepKvOnDisk: true }, callbacks, signal) }
                : local;
        }
        let backend;
        try {
            backend = backends.get(chosen.name);
        } catch (error) {
            throw new BackendNotFoundError(
                `The workspace "${meta!.name}" runs on backend "${chosen.name}" (${chosen.model}), which this Kvault does not have now: it was not started with it, or it was removed in the settings. Add it again in Settings › Remote backends (or start the server with --backend ${chosen.name}=URL), or make a workspace on this computer.`,
                { cause: error }
            );
        }
        return { chat: (turn, callbacks, signal) => backend.chat(chosen.model, turn, callbacks, signal) };
    };
}
