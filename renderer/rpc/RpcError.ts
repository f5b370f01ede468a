// The one RPC client's error (contract/rpcClient/), under the name the renderer's views import,
// and the turn-ending codes only the renderer tells apart.
export { clientErrorCodes, RpcError, toRpcError } from "../../contract/rpcClient/index.js";

/** The engine's code for a turn that ended because it was cancelled (Stop, or the client left). */
export const CANCELLED_CODE = "request_cancelled";

/** The host's code for a chat's turn ended by a Stop from any page; it kept what streamed (host/rpc/HostTurns.ts). */
export const STOPPED_CODE = "turn_stopped";
