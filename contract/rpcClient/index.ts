// The one RPC client (contract/rpc.ts's calls over a transport): the renderer's, the `kvault`
// command's and the tests'. It imports nothing outside contract/ and nothing of Node, so a page
// and a Node process run the same code (eslint.config.js holds this).
export type { ChatCallRequest, ConnectionStatus, KvaultRpc, PlainRpcMethod, RpcCallOptions, TurnListener } from "./KvaultRpc.js";
export { RpcClient, type RpcClientOptions } from "./RpcClient.js";
export { clientErrorCodes, RpcError, toRpcError } from "./RpcError.js";
export type { RpcTransport, RpcTransportHandlers } from "./RpcTransport.js";
export { reconnectDelaysMs, WebSocketTransport, type WebSocketTransportOptions } from "./WebSocketTransport.js";
