import type { EngineSupervisor } from "../engine/host/EngineSupervisor.js";
import type { EngineClient } from "./EngineClient.js";

/**
 * The EngineClient every host-side consumer (the renderer's RPC, the local API) uses, over the
 * supervised engine process. `resolveModel` turns switchModel's argument ("tiny" or a path) into
 * the file to load.
 */
export function supervisorEngineClient(supervisor: EngineSupervisor, resolveModel: (model: string) => string = (model) => model): EngineClient {
    return {
        info: () => supervisor.info,
        chat: (request, callbacks, signal) => supervisor.chat(request, callbacks, signal),
        measure: (workspace, messages, draft) => supervisor.measure(workspace, messages, draft),
        snapshot: () => supervisor.snapshot(),
        forgetWorkspace: (workspace) => supervisor.forgetWorkspace(workspace),
        audit: () => supervisor.audit(),
        replayableTurns: () => supervisor.replayableTurns(),
        replay: (requestId) => supervisor.replay(requestId),
        listDrills: () => supervisor.listDrills(),
        runDrill: (id) => supervisor.runDrill(id),
        inspectModel: (modelPath) => supervisor.inspectModel(modelPath),
        switchModel: async (model) => supervisor.switchModel(resolveModel(model))
    };
}
