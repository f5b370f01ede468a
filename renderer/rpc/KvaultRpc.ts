// The renderer's names for the one RPC client's types (contract/rpcClient/), which the
// `kvault` command and the tests share: the stores and views import them from here.
export type { ConnectionStatus, KvaultRpc, PlainRpcMethod, TurnListener } from "../../contract/rpcClient/index.js";
