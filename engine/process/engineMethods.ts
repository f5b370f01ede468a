import type { EngineMethod, RpcParams, RpcResult } from "../../contract/rpc.js";
import type { EngineService } from "../service/EngineService.js";
import { readResourceUse } from "./readResourceUse.js";

/** What the engine process serves of EngineService; tests may serve a stand-in. */
export type ServedEngine = Pick<
    EngineService,
    | "chat"
    | "embed"
    | "measure"
    | "snapshot"
    | "forgetWorkspace"
    | "audit"
    | "replayableTurns"
    | "replay"
    | "listDrills"
    | "runDrill"
    | "runCanary"
    | "kvHolders"
    | "workspaceTokensPerSecond"
    | "vramState"
    | "tokenize"
    | "tokenizeChat"
    | "detokenize"
    | "memoryEvents"
>;

/** Every engine-served method of the RPC spec, over its params object. */
export type EngineImplementations = {
    readonly [M in EngineMethod]: (params: RpcParams<M>) => RpcResult<M> | Promise<RpcResult<M>>;
};

/**
 * The engine's side of every `call` (contract/rpc/rpcSpec.ts, `serve: "engine"`): params as the
 * host's spec check rebuilt them, to EngineService's arguments. The same table serves the engine
 * process (EngineCommandServer) and an engine in a test's process (localEngine). A new engine
 * method is one line here.
 */
export function engineMethods(service: ServedEngine): EngineImplementations {
    return {
        measure: ({ workspace, messages, draft }) => service.measure(workspace, messages, draft),
        snapshot: () => service.snapshot(),
        forgetWorkspace: async ({ workspace }) => {
            await service.forgetWorkspace(workspace);
            return {};
        },
        audit: () => service.audit(),
        replayableTurns: () => service.replayableTurns(),
        replay: ({ requestId }) => service.replay(requestId),
        listDrills: () => service.listDrills(),
        runDrill: ({ id }) => service.runDrill(id),
        runCanary: ({ fillerTokens }) => service.runCanary(fillerTokens === undefined ? {} : { fillerTokens }),
        embed: ({ inputs }) => service.embed(inputs),
        tokenize: ({ content, addSpecial, withPieces }) => service.tokenize(content, { addSpecial, withPieces }),
        tokenizeChat: async ({ messages }) => ({ tokens: await service.tokenizeChat(messages) }),
        detokenize: ({ tokens }) => ({ content: service.detokenize(tokens) }),
        memoryEvents: ({ afterSeq }) => service.memoryEvents(afterSeq),
        // Answered here, not by EngineService: liveness is this process's event loop answering, whatever the engine is doing.
        ping: () => ({}),
        resourceUse: () => readResourceUse(service)
    };
}
