// The checks every store call's params pass, for both hosts (host/rpc/RpcServer.ts over the
// WebSocket, main/ipc/validateRpcPayload.ts over Electron IPC): one copy, so they cannot drift.
import type { RpcMethod, RpcMethods } from "../../contract/rpc.js";
import { isStoreId, workspaceLimits } from "../../contract/workspaces.js";
import { InvalidRequestError } from "../../engine/index.js";
import { describe, readStoredMessage, readWorkspaceMeta } from "./readStoredValues.js";

export type StoreMethod =
    | "loadWorkspaces"
    | "importWorkspaces"
    | "saveWorkspace"
    | "removeWorkspace"
    | "selectWorkspace"
    | "appendMessage"
    | "dropLastAnswer"
    | "clearChat";

/** A store call whose params have the contract's types and sizes. */
export type StoreCall = { [M in StoreMethod]: { readonly method: M; readonly params: RpcMethods[M]["params"] } }[StoreMethod];

/** Top-level fields each store method's params may carry; anything else is refused, not ignored. */
export const storeParamFields: { readonly [M in StoreMethod]: readonly string[] } = {
    loadWorkspaces: [],
    importWorkspaces: ["document"],
    saveWorkspace: ["workspace"],
    removeWorkspace: ["workspace"],
    selectWorkspace: ["workspace"],
    appendMessage: ["workspace", "message"],
    dropLastAnswer: ["workspace", "messageId"],
    clearChat: ["workspace"]
};

export function isStoreMethod(method: RpcMethod): method is StoreMethod {
    return Object.hasOwn(storeParamFields, method);
}

export function isStoreCall(call: { readonly method: RpcMethod; readonly params: unknown }): call is StoreCall {
    return isStoreMethod(call.method);
}

/**
 * `params` checked and rebuilt from their known fields. Throws InvalidRequestError (code
 * invalid_request) naming the field and the limit: an id that could not name a file, a message
 * over the size limit, a wrong type, an extra field.
 */
export function parseStoreCall(method: StoreMethod, params: Record<string, unknown>): StoreCall {
    for (const key of Object.keys(params)) {
        if (!storeParamFields[method].includes(key)) {
            throw new InvalidRequestError(
                `${method} takes no field ${describe(key)}; its params are {${storeParamFields[method].join(", ")}}.`
            );
        }
    }
    switch (method) {
        case "loadWorkspaces":
            return { method, params: {} };
        case "importWorkspaces": {
            const { document } = params;
            if (typeof document !== "string" || document.length > workspaceLimits.maxImportChars) {
                throw new InvalidRequestError(
                    `importWorkspaces takes document (a string of at most ${workspaceLimits.maxImportChars.toLocaleString("en-US")} characters); got ${describe(document)}.`
                );
            }
            return { method, params: { document } };
        }
        case "saveWorkspace": {
            const read = readWorkspaceMeta(params.workspace);
            if (!read.ok) {
                throw new InvalidRequestError(`saveWorkspace's workspace is not one the store can keep: ${read.reason}.`);
            }
            return { method, params: { workspace: read.value } };
        }
        case "removeWorkspace":
        case "selectWorkspace":
        case "clearChat":
            return { method, params: { workspace: storeId(params.workspace, "workspace") } };
        case "appendMessage": {
            const workspace = storeId(params.workspace, "workspace");
            const read = readStoredMessage(params.message);
            if (!read.ok) {
                throw new InvalidRequestError(`appendMessage's message is not one the store can keep: ${read.reason}.`);
            }
            return { method, params: { workspace, message: read.value } };
        }
        case "dropLastAnswer":
            return {
                method,
                params: { workspace: storeId(params.workspace, "workspace"), messageId: storeId(params.messageId, "messageId") }
            };
    }
}

function storeId(value: unknown, name: string): string {
    if (!isStoreId(value)) {
        throw new InvalidRequestError(
            `${name} ${describe(value)} is not a workspace or message id: 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter or digit.`
        );
    }
    return value;
}
