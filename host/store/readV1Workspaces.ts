// Format 1: what the renderer persisted to localStorage under "kvault.workspaces" before the host
// kept the chats (zustand persist): {"state":{"workspaces":[…with messages],"selectedId":…},"version":1}.
// Read once, by the v1 → v2 migration (that document as <dataDir>/workspaces.json) and by
// importWorkspaces (the renderer hands its localStorage over on the first start).
import crypto from "node:crypto";
import type { StoredMessage, StoredWorkspace, WorkspaceSettings } from "../../contract/workspaces.js";
import { defaultWorkspaceSettings, isStoreId, workspaceLimits } from "../../contract/workspaces.js";
import { describe, isRecord, readStoredMessage } from "./readStoredValues.js";

/** Something of the document left out of the store: it stays in the kept copy of the document. */
export interface V1Omission {
    readonly workspace: string | null;
    readonly workspaceName: string | null;
    /** Where in the document, e.g. "workspaces[1].messages[4]". */
    readonly path: string;
    /** Its JSON's size in bytes. */
    readonly bytes: number;
    readonly reason: string;
}

export interface V1Workspaces {
    readonly workspaces: readonly StoredWorkspace[];
    readonly selectedId: string | null;
    readonly omissions: readonly V1Omission[];
}

/**
 * Reads a format-1 document as the renderer did (its former readPersistedWorkspaces): a bad setting falls
 * back to its default. Unlike it, nothing is dropped unsaid: a workspace or message that cannot
 * be stored is listed in `omissions`. Ids that cannot name a file (or repeat) get new ones.
 */
export function readV1Workspaces(text: string): V1Workspaces {
    const empty = (reason: string): V1Workspaces => ({
        workspaces: [],
        selectedId: null,
        omissions:
            text.trim() === "" ? [] : [{ workspace: null, workspaceName: null, path: "(the document)", bytes: byteLength(text), reason }]
    });
    let document: unknown;
    try {
        document = JSON.parse(text);
    } catch {
        return empty("not JSON");
    }
    if (!isRecord(document) || !isRecord(document.state)) {
        return empty("not a saved workspace list ({state, version})");
    }
    if (document.version !== 1) {
        return empty(`version ${describe(document.version)}, not 1`);
    }
    const { state } = document;
    const items = Array.isArray(state.workspaces) ? state.workspaces : [];
    const omissions: V1Omission[] = [];
    const workspaces: StoredWorkspace[] = [];
    const ids = new Set<string>();
    let selectedId: string | null = null;
    items.forEach((item: unknown, index: number) => {
        const where = `workspaces[${index}]`;
        if (!isRecord(item) || typeof item.name !== "string") {
            omissions.push({
                workspace: null,
                workspaceName: null,
                path: where,
                bytes: jsonBytes(item),
                reason: "not a workspace with a name"
            });
            return;
        }
        const id = isStoreId(item.id) && !ids.has(item.id) ? item.id : stableId("ui-", where);
        ids.add(id);
        if (item.id === state.selectedId && selectedId === null) {
            selectedId = id;
        }
        const name = item.name.trim().slice(0, workspaceLimits.maxNameChars) || `Workspace ${index + 1}`;
        const messages: StoredMessage[] = [];
        const messageIds = new Set<string>();
        const rawMessages = Array.isArray(item.messages) ? item.messages : [];
        rawMessages.forEach((raw: unknown, messageIndex: number) => {
            const rawId = isRecord(raw) ? raw.id : undefined;
            const messageId = isStoreId(rawId) && !messageIds.has(rawId) ? rawId : stableId("m-", `${where}.messages[${messageIndex}]`);
            // As before, a bad finish or usage is left out and the message kept.
            const full = readStoredMessage(isRecord(raw) ? { ...raw, id: messageId } : raw);
            const message =
                full.ok || !isRecord(raw) ? full : readStoredMessage({ ...raw, id: messageId, finish: undefined, usage: undefined });
            if (!message.ok) {
                omissions.push({
                    workspace: id,
                    workspaceName: name,
                    path: `${where}.messages[${messageIndex}]`,
                    bytes: jsonBytes(raw),
                    reason: message.reason
                });
                return;
            }
            messageIds.add(messageId);
            messages.push(message.value);
        });
        const settings = readV1Settings(item.settings);
        if (settings.systemPrompt.length > workspaceLimits.maxSystemPromptChars) {
            omissions.push({
                workspace: id,
                workspaceName: name,
                path: `${where}.settings.systemPrompt`,
                bytes: byteLength(settings.systemPrompt),
                reason: `the system prompt has ${settings.systemPrompt.length.toLocaleString("en-US")} characters; it was cut to ${workspaceLimits.maxSystemPromptChars.toLocaleString("en-US")}`
            });
        }
        const colour =
            typeof item.colour === "number" && Number.isSafeInteger(item.colour) && item.colour >= 0 && item.colour <= 1_000
                ? item.colour
                : 0;
        workspaces.push({
            id,
            name,
            colour,
            settings: { ...settings, systemPrompt: settings.systemPrompt.slice(0, workspaceLimits.maxSystemPromptChars) },
            messages
        });
    });
    const kept = workspaces.slice(0, workspaceLimits.maxWorkspaces);
    for (const workspace of workspaces.slice(workspaceLimits.maxWorkspaces)) {
        omissions.push({
            workspace: workspace.id,
            workspaceName: workspace.name,
            path: "workspaces",
            bytes: jsonBytes(workspace),
            reason: `more than ${workspaceLimits.maxWorkspaces.toLocaleString("en-US")} workspaces`
        });
    }
    return {
        workspaces: kept,
        selectedId: kept.some((workspace) => workspace.id === selectedId) ? selectedId : (kept[0]?.id ?? null),
        omissions
    };
}

function readV1Settings(value: unknown): WorkspaceSettings {
    const settings = isRecord(value) ? value : {};
    const { systemPrompt, temperature, maxTokens } = settings;
    return {
        systemPrompt: typeof systemPrompt === "string" ? systemPrompt : defaultWorkspaceSettings.systemPrompt,
        temperature:
            typeof temperature === "number" &&
            temperature >= workspaceLimits.minTemperature &&
            temperature <= workspaceLimits.maxTemperature
                ? temperature
                : defaultWorkspaceSettings.temperature,
        maxTokens:
            typeof maxTokens === "number" &&
            Number.isSafeInteger(maxTokens) &&
            maxTokens >= workspaceLimits.minMaxTokens &&
            maxTokens <= workspaceLimits.maxMaxTokens
                ? maxTokens
                : defaultWorkspaceSettings.maxTokens
    };
}

/**
 * A new id in the renderer's shape (`prefix` then 32 hex digits), the same on every read of the
 * document: a migration interrupted and run again writes the same files, not a second set.
 */
function stableId(prefix: string, where: string): string {
    return prefix + crypto.createHash("sha256").update(`kvault-v1:${where}`).digest("hex").slice(0, 32);
}

function jsonBytes(value: unknown): number {
    return byteLength(JSON.stringify(value) ?? "");
}

function byteLength(text: string): number {
    return Buffer.byteLength(text, "utf8");
}
