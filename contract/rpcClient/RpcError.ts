/**
 * A failed RPC call or turn, as a client sees it: the server's stable `code` and its message,
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

/** Codes the client itself gives; every other code comes from the host or the engine. */
export const clientErrorCodes = {
    /** The connection closed while the call was in flight. */
    connectionLost: "connection_lost",
    /** A call made while there is no connection, or a connection that could not be opened. */
    notConnected: "not_connected",
    /** The server's answer did not have the RPC's shape. */
    badMessage: "bad_message",
    /** No answer within the call's time limit (a client that gave one: the `kvault` command, the tests). */
    timedOut: "rpc_timeout"
} as const;

/** Any thrown value as an RpcError, keeping a `code` when it has one. */
export function toRpcError(error: unknown): RpcError {
    if (error instanceof RpcError) {
        return error;
    }
    const code =
        typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : "internal_error";
    return new RpcError(code, error instanceof Error ? error.message : String(error));
}
