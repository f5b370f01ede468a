// Workspaces and their chats as the host stores them (host/store/) and the renderer shows them.
// The host owns the truth; the renderer loads it at start and writes every change through the RPC
// (contract/rpc.ts: loadWorkspaces, saveWorkspace, appendMessage, …).

import type { FinishReason, TurnUsage } from "./engineProtocol.js";
import type { McpToolCallOutcome } from "./mcp.js";
import { turnLimits } from "./limits.js";

export interface WorkspaceSettings {
    /** Sent as the first message when not empty. */
    readonly systemPrompt: string;
    /** 0 is greedy. */
    readonly temperature: number;
    /** Tokens to generate at most per answer. */
    readonly maxTokens: number;
    /**
     * The sampler's other knobs; absent is the engine's default (none of them is applied). Stored
     * since format 3; a format-2 workspace has none of them.
     */
    readonly topP?: number;
    readonly topK?: number;
    readonly minP?: number;
    readonly repeatPenalty?: number;
    /** The same seed and settings give the same answer to the same chat. */
    readonly seed?: number;
    /** Generation ends before any of these strings. */
    readonly stop?: readonly string[];
    /**
     * Keep the workspace's KV on disk, encrypted (AES-256-GCM, bound to the model and KV settings),
     * so its first turn after a restart loads it instead of reading the whole chat again. Absent is
     * off: by default no KV ever touches a disk.
     */
    readonly keepKvOnDisk?: boolean;
    /** The MCP servers (mcp.json's names) whose tools the chat offers the model; absent or empty is none. */
    readonly mcpServers?: readonly string[];
    /** "required": the answer's first part is a tool call (a grammar holds it), then the model answers freely; absent is "auto". */
    readonly toolChoice?: "auto" | "required";
}

/** How long an answer took, measured where the turn was run from, in milliseconds. */
export interface MessageTiming {
    /** From sending the turn to its first token of text (queueing and prompt processing included). */
    readonly firstTokenMs: number;
    /** From sending the turn to its end. */
    readonly totalMs: number;
}

/** One message of a workspace's chat. Only the user's messages and whole answers are stored: never an error. */
export interface StoredMessage {
    readonly id: string;
    readonly role: "user" | "assistant";
    readonly content: string;
    /** How an answer ended: the model's own stop, its length limit, or the user's Stop. */
    readonly finish?: FinishReason | "stopped";
    readonly usage?: TurnUsage;
    /**
     * The message this one follows (null: the chat's first), so an edited message and a
     * regenerated answer become branches beside the one they replace (contract/chatBranches.ts).
     * Absent when appended: it follows the chat's last message. The store always fills it in.
     */
    readonly parent?: string | null;
    /** When it was made, milliseconds since 1970 (UTC); orders branches. Absent for messages from before format 3. */
    readonly at?: number;
    readonly timing?: MessageTiming;
    /** An answer's MCP tool calls, made before its text, each with its result or named error (shown collapsed above the answer). */
    readonly toolCalls?: readonly McpToolCallOutcome[];
    /**
     * The model that wrote an answer, as its engine names it (EngineInfo.modelName: a GGUF's
     * general.name, or its file's name): the chat labels the demo model's answers by it. Absent on
     * the user's messages and on answers kept before it was recorded.
     */
    readonly model?: string;
}

/** A workspace without its chat: what the metadata file holds, and what saveWorkspace takes. */
export interface WorkspaceMeta {
    /** Also the engine's workspace and the name of its chat file, so limited to `workspaceLimits.idPattern`. */
    readonly id: string;
    readonly name: string;
    /** An index into the renderer's palette. */
    readonly colour: number;
    readonly settings: WorkspaceSettings;
    /**
     * Where its turns run: absent is this computer's engine; else a remote backend of Kvault's
     * (the settings screen's, or `--backend NAME=URL`) and one of its models. Chosen when the workspace is made.
     * Optional in format 3, so a folder written before backends reads as it did (every workspace local).
     */
    readonly backend?: WorkspaceBackend;
    /**
     * A local model other than the one the host runs: a model found on disk, named as `/v1/models`
     * lists it (LM Studio's, Ollama's, Hugging Face's or a --models-folder file), loaded for the
     * workspace's first turn and unloaded when idle (host/supervisor/EnginePool.ts). Absent is the
     * host's model; a workspace with a `backend` runs there instead.
     */
    readonly localModel?: string;
}

/** A workspace's remote backend (contract/backends.ts): its name and the backend's own model id. */
export interface WorkspaceBackend {
    readonly name: string;
    readonly model: string;
}

export interface StoredWorkspace extends WorkspaceMeta {
    /** The chat shown and sent to the model: the branch chosen, from the first message to the last. */
    readonly messages: readonly StoredMessage[];
    /** Every other branch's messages (earlier answers, messages before an edit), in no order; absent is none. */
    readonly branches?: readonly StoredMessage[];
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
    /** The sampler's ranges: the turn's (contract/rpc/turnSchemas.ts). */
    maxTopK: 1_000_000,
    maxRepeatPenalty: 2,
    maxSeed: 2 ** 32 - 1,
    maxStopStrings: turnLimits.maxStopStrings,
    maxStopChars: turnLimits.maxStopChars,
    /** A chat file exported (Export JSON) and imported again, in characters; sent in parts like the workspaces document. */
    maxChatImportChars: 16_000_000,
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

/**
 * A chat as Export JSON writes it and Import reads it back (host/store/readChatExport.ts):
 * {"format":"kvault-chat","version":1,"exportedAt":"…","workspace":{"name","colour","settings"},
 * "messages":[…the branch shown…],"branches":[…every other message…]}. Messages are StoredMessage.
 */
export const chatExportFormat = Object.freeze({ format: "kvault-chat", version: 1 });

export interface ChatExport {
    readonly format: typeof chatExportFormat.format;
    readonly version: typeof chatExportFormat.version;
    /** ISO 8601, UTC; informative only. */
    readonly exportedAt: string;
    readonly workspace: { readonly name: string; readonly colour: number; readonly settings: WorkspaceSettings };
    readonly messages: readonly StoredMessage[];
    readonly branches: readonly StoredMessage[];
}
