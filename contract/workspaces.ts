// Workspaces and their chats as the host stores them (host/store/) and the renderer shows them.
// The host owns the truth; the renderer loads it at start and writes every change through the RPC
// (contract/rpc.ts: loadWorkspaces, saveWorkspace, appendMessage, …).

import type { FinishReason, TurnUsage } from "./engineProtocol.js";
import { turnLimits } from "./limits.js";

export interface WorkspaceSettings {
    /** Sent as the first message when not empty. */
    readonly systemPrompt: string;
    /** 0 is greedy. */
    readonly temperature: number;
    /** Tokens to generate at most per answer. */
    readonly maxTokens: number;
}

/** One message of a workspace's chat. Only the user's messages and whole answers are stored: never an error. */
export interface StoredMessage {
    readonly id: string;
    readonly role: "user" | "assistant";
    readonly content: string;
    /** How an answer ended: the model's own stop, its length limit, or the user's Stop. */
    readonly finish?: FinishReason | "stopped";
    readonly usage?: TurnUsage;
}

/** A workspace without its chat: what the metadata file holds, and what saveWorkspace takes. */
export interface WorkspaceMeta {
    /** Also the engine's workspace and the name of its chat file, so limited to `workspaceLimits.idPattern`. */
    readonly id: string;
    readonly name: string;
    /** An index into the renderer's palette. */
    readonly colour: number;
    readonly settings: WorkspaceSettings;
}

export interface StoredWorkspace extends WorkspaceMeta {
    readonly messages: readonly StoredMessage[];
}

/**
 * Something the host found damaged when it read the chats, and set aside instead of dropping:
 * the record is not in the chat, and `copy` holds the file as it was.
 */
export interface StoreProblem {
    /** The workspace whose chat file it was; null for the workspace list itself or an imported document. */
    readonly workspace: string | null;
    readonly workspaceName: string | null;
    /** The damaged file. */
    readonly file: string;
    /** 1-based line of a chat file; null where the file is one JSON document. */
    readonly line: number | null;
    /** truncated: the last record was cut short (Kvault stopped while writing it); corrupt: a record that cannot be read. */
    readonly kind: "truncated" | "corrupt";
    /** Size of what was set aside, in bytes (UTF-8). */
    readonly bytes: number;
    /** Why it could not be read, e.g. "not JSON" or "content is not a string". */
    readonly reason: string;
    /** Where the file as it was is kept. */
    readonly copy: string;
}

export interface LoadedWorkspaces {
    /** In the order the user sees them. */
    readonly workspaces: readonly StoredWorkspace[];
    readonly selectedId: string | null;
    /** What the host set aside when it opened the store (every load repeats them until it restarts). */
    readonly problems: readonly StoreProblem[];
}

/** A new workspace's settings. */
export const defaultWorkspaceSettings: WorkspaceSettings = Object.freeze({
    systemPrompt: "",
    temperature: 0.7,
    maxTokens: 256
});

/** What the store and the settings accept; a chat's sampling ranges are the RPC's (contract/rpc/turnSchemas.ts). */
export const workspaceLimits = Object.freeze({
    minTemperature: 0,
    maxTemperature: 2,
    minMaxTokens: 1,
    maxMaxTokens: 1_048_576,
    maxNameChars: 80,
    /**
     * Workspace and message ids: lower-case letters, digits, '-' and '_', starting with a letter or
     * digit, 1 to 64 characters. A workspace id names its chat file, so nothing else may reach the
     * file system, and lower case keeps two ids apart on case-insensitive disks.
     */
    idPattern: /^[a-z0-9][a-z0-9_-]{0,63}$/,
    /** A message's content, in characters: a turn's per-message limit. */
    maxMessageChars: turnLimits.maxMessageChars,
    /** The system prompt, in characters: it is rewritten with the workspace list on every change. */
    maxSystemPromptChars: 100_000,
    maxWorkspaces: 1_000,
    /** A renderer's localStorage document handed over once by importWorkspaces (in parts), in characters. */
    maxImportChars: 16_000_000
});

/** Ids that are device names on Windows, where a file named after them cannot be made. */
const WINDOWS_DEVICE_NAMES = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/;

/** Whether `value` can be a workspace's or a message's id (workspaceLimits.idPattern, and no Windows device name). */
export function isStoreId(value: unknown): value is string {
    return typeof value === "string" && workspaceLimits.idPattern.test(value) && !WINDOWS_DEVICE_NAMES.test(value);
}
