// Checks of what the store reads back (chat files, the workspace list) and what the RPC hands it:
// anything may have written those bytes, so every field is checked and a bad one is named.

export type Read<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

/**
 * A message of a chat, and a workspace's entry in the workspace list: the RPC's schemas
 * (contract/rpc/storeSchemas.ts), so what the store reads back from its files and what the RPC
 * hands it are checked by the one definition.
 */
export { readStoredMessage, readWorkspaceMeta } from "../../contract/rpc/storeSchemas.js";

/** A short, bounded description for a reason: never echoes a huge value back; a missing field is "missing". */
export { describeStored as describe } from "../../contract/rpc/storeSchemas.js";

/** A JSON text that must hold an object: the object, or "not JSON" / "not a JSON object". */
export function parseJsonObject(text: string): Read<Record<string, unknown>> {
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch {
        return fail("not JSON");
    }
    return isRecord(value) ? { ok: true, value } : fail("not a JSON object");
}

export function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fail(reason: string): { ok: false; reason: string } {
    return { ok: false, reason };
}
