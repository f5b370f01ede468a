// One line of a chat file (`<id>.jsonl`): a self-describing JSON record with the store's format
// version, e.g. {"v":3,"op":"message","id":"m-1","role":"user","content":"Hi","parent":null}. A
// chat is the replay of its lines in order (readJournal, through contract/chatBranches.ts). Lines
// written in format 2 (no parent: each follows the one before; no select or delete) read as they
// always did, so the migration to format 3 leaves the chat files as they are.
import type { StoredMessage } from "../../contract/workspaces.js";
import { isStoreId } from "../../contract/workspaces.js";
import { describe, parseJsonObject, readStoredMessage, type Read } from "./readStoredValues.js";

/** The store's format: the workspace list's `v`, and every new chat record's. */
export const STORE_FORMAT_VERSION = 3;
/** Chat records of this format and later are read; format 2's are a subset of format 3's. */
const OLDEST_RECORD_VERSION = 2;

export type JournalRecord =
    | { readonly op: "message"; readonly message: StoredMessage }
    /** Regenerate: the last message, an answer with this id, leaves the chat. */
    | { readonly op: "drop"; readonly id: string }
    /** Clear chat: every message before it leaves the chat. */
    | { readonly op: "clear" }
    /** Shows the branch through this message (format 3). */
    | { readonly op: "select"; readonly id: string }
    /** This message leaves the chat; the ones after it follow its parent (format 3). */
    | { readonly op: "delete"; readonly id: string };

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
    if (typeof value.v !== "number" || value.v < OLDEST_RECORD_VERSION || value.v > STORE_FORMAT_VERSION) {
        return { ok: false, reason: `format ${describe(value.v)}, not ${OLDEST_RECORD_VERSION} to ${STORE_FORMAT_VERSION}` };
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
        case "select":
        case "delete":
            if (value.v < 3) {
                return { ok: false, reason: `op ${value.op} is not one of format ${describe(value.v)}` };
            }
            return isStoreId(value.id)
                ? { ok: true, value: { op: value.op, id: value.id } }
                : { ok: false, reason: `${value.op} names id ${describe(value.id)}, not a store id` };
        default:
            return { ok: false, reason: `op ${describe(value.op)} is not message, drop, clear, select or delete` };
    }
}
