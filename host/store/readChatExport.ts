// Import JSON: a chat file that Export JSON wrote (contract/workspaces.ts ChatExport), read as
// untrusted input. Every field is checked by the store's own schemas, so an imported chat holds
// nothing the store would refuse from the RPC or set aside from its own files; the first bad
// field is named with its place ("messages[3].content is 42, not a string").
import type { StoredMessage, StoredWorkspace } from "../../contract/workspaces.js";
import { chatExportFormat, workspaceLimits } from "../../contract/workspaces.js";
import { describe, isRecord, parseJsonObject, readStoredMessage, readWorkspaceMeta, type Read } from "./readStoredValues.js";

/** The workspace the file holds, under `id`, or why it cannot be imported. */
export function readChatExport(text: string, id: string): Read<StoredWorkspace> {
    if (text.length > workspaceLimits.maxChatImportChars) {
        return fail(
            `it has ${text.length.toLocaleString("en-US")} characters; Kvault imports chats of at most ${workspaceLimits.maxChatImportChars.toLocaleString("en-US")}`
        );
    }
    const parsed = parseJsonObject(text);
    if (!parsed.ok) {
        return fail(`it is ${parsed.reason}`);
    }
    const document = parsed.value;
    if (document.format !== chatExportFormat.format) {
        return fail(`its format is ${describe(document.format)}, not "${chatExportFormat.format}" (Export JSON writes that)`);
    }
    if (document.version !== chatExportFormat.version) {
        return fail(`it is version ${describe(document.version)}; this Kvault reads version ${chatExportFormat.version}`);
    }
    if (!isRecord(document.workspace)) {
        return fail(`workspace is ${describe(document.workspace)}, not an object`);
    }
    const meta = readWorkspaceMeta({ ...document.workspace, id });
    if (!meta.ok) {
        return fail(`workspace: ${meta.reason}`);
    }
    const messages = readMessages(document.messages, "messages");
    if (!messages.ok) {
        return messages;
    }
    const branches = document.branches === undefined ? ({ ok: true, value: [] } as const) : readMessages(document.branches, "branches");
    if (!branches.ok) {
        return branches;
    }
    const all = [...messages.value, ...branches.value];
    const ids = new Set<string>();
    for (const message of all) {
        if (ids.has(message.id)) {
            return fail(`message id ${message.id} is there twice`);
        }
        ids.add(message.id);
    }
    const lost = all.find((message) => typeof message.parent === "string" && !ids.has(message.parent));
    if (lost !== undefined) {
        return fail(`message ${lost.id} follows ${describe(lost.parent)}, which is not in the file`);
    }
    return { ok: true, value: { ...meta.value, messages: messages.value, branches: branches.value } };
}

function readMessages(value: unknown, field: string): Read<StoredMessage[]> {
    if (!Array.isArray(value)) {
        return fail(`${field} is ${describe(value)}, not a list`);
    }
    const messages: StoredMessage[] = [];
    for (const [index, item] of value.entries()) {
        const read = readStoredMessage(item);
        if (!read.ok) {
            return fail(`${field}[${index}]: ${read.reason}`);
        }
        messages.push(read.value);
    }
    return { ok: true, value: messages };
}

function fail(reason: string): { ok: false; reason: string } {
    return { ok: false, reason };
}
