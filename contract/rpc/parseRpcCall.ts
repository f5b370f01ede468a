// The one check of a call where it enters a host (host/rpc/RpcDispatcher.ts, for Electron IPC and
// the WebSocket alike): the method is one of the spec's and its params pass its schema. Pure:
// every outcome is a value, so a transport can answer it however it answers.
import * as v from "valibot";
import { describeValue, readIssue } from "./fieldSchemas.js";
import { rpcMethods, rpcSpec, type RpcMethod, type RpcParams } from "./rpcSpec.js";

/** A call whose method is the spec's and whose params passed its schema, rebuilt from the fields it names. */
export type RpcCall = { [M in RpcMethod]: { readonly method: M; readonly params: RpcParams<M> } }[RpcMethod];

export type ParsedRpcCall = { readonly ok: true; readonly call: RpcCall } | { readonly ok: false; readonly message: string };

export function isRpcMethod(method: unknown): method is RpcMethod {
    return typeof method === "string" && Object.hasOwn(rpcSpec, method);
}

/**
 * `method` and `params` as they arrived, checked against the spec. A refusal's message names the
 * field, the limit and what to do, and never echoes a huge value.
 */
export function parseRpcCall(method: unknown, params: unknown): ParsedRpcCall {
    if (!isRpcMethod(method)) {
        return { ok: false, message: `Unknown RPC method ${describeValue(method)}; use one of ${rpcMethods.join(", ")}.` };
    }
    const result = v.safeParse(rpcSpec[method].params, params, { abortEarly: true });
    if (!result.success) {
        return { ok: false, message: readIssue(result.issues[0]) };
    }
    return { ok: true, call: { method, params: result.output } as RpcCall };
}
