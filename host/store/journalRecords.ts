// One line of a chat file (`<id>.jsonl`): a self-describing JSON record with the store's format
// version, e.g. {"v":2,"op":"message","id":"m-1","role":"user","content":"Hi"}. A chat is the
// replay of its lines in order.
import type { StoredMessage } from "../../contract/workspaces.js";
import { isStoreId } from "../../contract/workspaces.js";
import { describe, parseJsonObject, readStoredMessage, type Read } from "./readStoredValues.js";

/** The store's format: the workspace list's `v`, and every chat record's. */
export const STORE_FORMAT_VERSION = 2;

export type JournalRecord =
    | { readonly op: "message"; readonly message: StoredMessage }
    /** Regenerate: the last message, an answer with this id, leaves the chat. */
    | { readonly op: "drop"; readonly id: string }
    /** Clear chat: every message before it leaves the chat. */
    | { readonly op: "clear" };

/** The record as one line, newline included: JSON escapes every newline inside strings. */
export function encodeJournalRecord(record: JournalRecord): string {
    const body =
        record.op === "message" ? { v: STORE_FORMAT_VERSION, op: record.op, ...record.message } : { v: STORE_FORMAT_VERSION, ...record };
    return `${JSON.stringify(body)}\n`;
}

/** A line's text (without its newline) as a record, or why it is not one. */
export function parseJournalLine(text: string): Read<JournalRecord> {
    const parsed = parseJsonObject(text);
    if (!parsed.ok) {
        return parsed;
    }
    const value = parsed.value;
    if (value.v !== STORE_FORMAT_VERSION) {
        return { ok: false, reason: `format ${describe(value.v)}, not ${STORE_FORMAT_VERSION}` };
    }
    switch (value.op) {
        case "message": {
            const { v: _v, op: _op, ...fields } = value;
            const message = readStoredMessage(fields);
            return message.ok ? { ok: true, value: { op: "message", message: message.value } } : message;
        }
        case "drop":
            return isStoreId(value.id)
                ? { ok: true, value: { op: "drop", id: value.id } }
                : { ok: false, reason: `drop names id ${describe(value.id)}, not a store id` };
        case "clear":
            return { ok: true, value: { op: "clear" } };
        default:
            return { ok: false, reason: `op ${describe(value.op)} is not message, drop or clear` };
    }
}
