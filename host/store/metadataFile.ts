// The workspace list (`workspaces/index.json`), always replaced whole and atomically:
// {"v":3,"selectedId":"ui-…","workspaces":[{"id":"ui-…","name":"Workspace 1","colour":0,"settings":{…}}]}
// A workspace on a remote backend also has "backend":{"name":"gpu","model":"…"} (absent: this computer).
import type { WorkspaceMeta } from "../../contract/workspaces.js";
import { STORE_FORMAT_VERSION } from "./journalRecords.js";
import { describe, parseJsonObject, readWorkspaceMeta, type Read } from "./readStoredValues.js";

export interface Metadata {
    readonly selectedId: string | null;
    readonly workspaces: readonly WorkspaceMeta[];
}

export interface ParsedMetadata {
    readonly version: number;
    readonly selectedId: unknown;
    /** Each entry as read, in order: a bad one says why. */
    readonly entries: readonly { readonly raw: unknown; readonly read: Read<WorkspaceMeta> }[];
}

/** A workspace's entry as the list keeps it: its meta fields only (a backend or a local model only when it has one), never its chat. */
export function metaOf({ id, name, colour, settings, backend, localModel }: WorkspaceMeta): WorkspaceMeta {
    return {
        id,
        name,
        colour,
        settings,
        ...(backend === undefined ? {} : { backend }),
        ...(localModel === undefined ? {} : { localModel })
    };
}

export function encodeMetadata(metadata: Metadata): string {
    return `${JSON.stringify({ v: STORE_FORMAT_VERSION, selectedId: metadata.selectedId, workspaces: metadata.workspaces }, null, 2)}\n`;
}

/**
 * The list's format version and entries, or why the file is not a workspace list at all. A list
 * in another format comes back with its version only: the caller refuses a newer one.
 */
export function parseMetadata(text: string): Read<ParsedMetadata> {
    const parsed = parseJsonObject(text);
    if (!parsed.ok) {
        return parsed;
    }
    const value = parsed.value;
    if (typeof value.v !== "number" || !Number.isSafeInteger(value.v) || value.v < 1) {
        return { ok: false, reason: `format ${describe(value.v)} is not a version number` };
    }
    if (value.v !== STORE_FORMAT_VERSION) {
        return { ok: true, value: { version: value.v, selectedId: null, entries: [] } };
    }
    if (!Array.isArray(value.workspaces)) {
        return { ok: false, reason: `workspaces is ${describe(value.workspaces)}, not a list` };
    }
    return {
        ok: true,
        value: {
            version: value.v,
            selectedId: value.selectedId,
            entries: value.workspaces.map((raw: unknown) => ({ raw, read: readWorkspaceMeta(raw) }))
        }
    };
}
