/**
 * A failed RPC call or turn, as the renderer sees it: the server's stable `code` and its message,
 * which already says what happened, the numbers and what to do.
 */
export class RpcError extends Error {
    constructor(
        readonly code: string,
        message: string
    ) {
        super(message);
        this.name = "RpcError";
    }
}

/** Codes the renderer itself gives; every other code comes from the host or the engine. */
export const clientErrorCodes = {
    /** The connection closed while the call was in flight. */
    connectionLost: "connection_lost",
    /** A call made while there is no connection. */
    notConnected: "not_connected",
    /** The server's answer did not have the RPC's shape. */
    badMessage: "bad_message"
} as const;

/** The engine's code for a turn that ended because it was cancelled (Stop, or the client left). */
export const CANCELLED_CODE = "request_cancelled";

/** The host's code for a chat's turn ended by a Stop from any page; it kept what streamed (host/rpc/HostTurns.ts). */
export const STOPPED_CODE = "turn_stopped";

/** Any thrown value as an RpcError, keeping a `code` when it has one. */
export function toRpcError(error: unknown): RpcError {
    if (error instanceof RpcError) {
        return error;
    }
    const code =
        typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : "internal_error";
    return new RpcError(code, error instanceof Error ? error.message : String(error));
}
