import { create } from "zustand";
import type { EngineErrorPayload, EngineInfo } from "../../contract/engineProtocol.js";
import type { DecodedSnapshot } from "../pageMap/decodeSnapshot.js";
import type { ConnectionStatus } from "../rpc/KvaultRpc.js";

export interface EngineState {
    readonly connection: ConnectionStatus;
    /** What the engine said about itself on the last connect. */
    readonly info: EngineInfo | undefined;
    readonly infoError: string | undefined;
    /** The latest snapshot, decoded; the UI mirrors it and never edits it. */
    readonly snapshot: DecodedSnapshot | undefined;
    /** Why the last snapshot could not be read, if it could not. */
    readonly snapshotError: string | undefined;
    /** A snapshot has been asked for and not answered for a while (the engine is busy or restarting): `snapshot` is old. */
    readonly snapshotLate: boolean;
    /** Why no engine is serving (it could not start, or the supervisor gave up on it); undefined while one is. */
    readonly engineProblem: EngineErrorPayload | undefined;
}

/**
 * The renderer's mirror of the engine, which owns the truth: written only by EngineMirror from the RPC's
 * status, `info` and `snapshot`; read by every panel.
 */
export function createEngineStore() {
    return create<EngineState>()(() => ({
        connection: { kind: "connecting" },
        info: undefined,
        infoError: undefined,
        snapshot: undefined,
        snapshotError: undefined,
        snapshotLate: false,
        engineProblem: undefined
    }));
}

export const useEngineStore = createEngineStore();
