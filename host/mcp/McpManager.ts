// The host's MCP tool servers: the data directory's mcp.json read once at start, each server
// connected in the background (one that fails is listed with why, and tried again on its next
// call), the tools a workspace offers (its settings name the servers), and the user's standing
// permissions ("always" kept in mcp-permissions.json beside it; "for this chat" for the host's life).
import fs from "node:fs";
import path from "node:path";
import type { McpPermission, McpServersView } from "../../contract/mcp.js";
import { KvaultError } from "../../engine/index.js";
import { writeFileAtomic } from "../store/writeFileAtomic.js";
import { McpConnection, type McpTool } from "./McpConnection.js";
import { readMcpConfig, type McpServerEntry } from "./mcpConfig.js";
import { McpToolUnknownError } from "./mcpErrors.js";

/** A tool as a workspace offers it to the model: `server__tool`, so two servers' tools of one name stay apart. */
export interface OfferedTool extends McpTool {
    readonly server: string;
    readonly tool: string;
}

/** Between a server's name and its tool's in the name the model sees. */
export const TOOL_NAME_SEPARATOR = "__";

export class McpManager {
    readonly configPath: string;
    readonly #permissionsPath: string;
    readonly #connections = new Map<string, McpConnection>();
    readonly #configErrors = new Map<string, KvaultError>();
    #fileError: KvaultError | undefined;
    readonly #always: Set<string>;
    /** "server/tool" allowed for the rest of a chat, by workspace. */
    readonly #forChat = new Map<string, Set<string>>();
    #disposed: Promise<void> | undefined;

    constructor(
        dataDirectory: string,
        private readonly log: (line: string) => void
    ) {
        this.configPath = path.join(dataDirectory, "mcp.json");
        this.#permissionsPath = path.join(dataDirectory, "mcp-permissions.json");
        let entries: McpServerEntry[] = [];
        try {
            entries = readMcpConfig(this.configPath);
        } catch (error) {
            if (!(error instanceof KvaultError)) {
                throw error;
            }
            this.#fileError = error;
            log(error.message);
        }
        for (const entry of entries) {
            if (entry.ok) {
                this.#connections.set(entry.config.name, new McpConnection(entry.config, log));
            } else {
                this.#configErrors.set(entry.name, entry.error);
                log(entry.error.message);
            }
        }
        this.#always = new Set(readPermissions(this.#permissionsPath));
    }

    /** Connects every server (in parallel); resolves once each is connected or failed. */
    async connectAll(): Promise<void> {
        await Promise.all([...this.#connections.values()].map((connection) => connection.connect()));
    }

    /** Each server's state now; a failed one is tried again in the background, so the next listing (Refresh) shows how that went. */
    list(): McpServersView {
        const views = [...this.#connections.values()].map((connection) => connection.view());
        for (const connection of this.#connections.values()) {
            if (connection.view().state === "failed") {
                void connection.connect();
            }
        }
        return {
            configPath: this.configPath,
            servers: [
                ...views,
                ...[...this.#configErrors].map(([name, error]) => ({
                    name,
                    transport: "stdio" as const,
                    target: "",
                    state: "failed" as const,
                    tools: [],
                    error: { code: error.code, message: error.message }
                }))
            ],
            ...(this.#fileError === undefined ? {} : { configError: { code: this.#fileError.code, message: this.#fileError.message } })
        };
    }

    /** The tools of `servers` (a workspace's choice) that are connected now, connecting those not yet tried. */
    async tools(servers: readonly string[]): Promise<OfferedTool[]> {
        const chosen = servers.flatMap((name) => {
            const connection = this.#connections.get(name);
            return connection === undefined ? [] : [connection];
        });
        await Promise.all(chosen.map((connection) => (connection.view().state === "connected" ? undefined : connection.connect())));
        return chosen.flatMap((connection) =>
            connection.tools.map((tool) => ({
                ...tool,
                server: connection.config.name,
                tool: tool.name,
                name: `${connection.config.name}${TOOL_NAME_SEPARATOR}${tool.name}`
            }))
        );
    }

    /** Runs `tool` of `server`; its result text, or a named error (mcpErrors.ts). */
    async call(server: string, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
        const connection = this.#connections.get(server);
        if (connection === undefined) {
            throw new McpToolUnknownError(`No MCP server "${server}" is configured in ${this.configPath}.`);
        }
        return await connection.call(tool, args, signal);
    }

    /** Whether the user already allowed `tool` of `server` in `workspace` (for this chat, or always). */
    allowed(workspace: string, server: string, tool: string): boolean {
        const key = permissionKey(server, tool);
        return this.#always.has(key) || (this.#forChat.get(workspace)?.has(key) ?? false);
    }

    /** Keeps a standing permission: "chat" for this workspace's chat, "always" on disk; "once" and "deny" keep nothing. */
    remember(workspace: string, server: string, tool: string, permission: McpPermission): void {
        const key = permissionKey(server, tool);
        if (permission === "chat") {
            const allowed = this.#forChat.get(workspace) ?? new Set<string>();
            allowed.add(key);
            this.#forChat.set(workspace, allowed);
        } else if (permission === "always" && !this.#always.has(key)) {
            this.#always.add(key);
            void writeFileAtomic(this.#permissionsPath, `${JSON.stringify({ always: [...this.#always] }, null, 2)}\n`).catch(
                (error: unknown) => this.log(`mcp-permissions.json could not be written: ${(error as Error).message}`)
            );
        }
    }

    /** A chat cleared or deleted: its "for this chat" permissions end with it. */
    forgetChat(workspace: string): void {
        this.#forChat.delete(workspace);
    }

    /** Closes every server (stdio servers' processes end); idempotent. */
    dispose(): Promise<void> {
        this.#disposed ??= Promise.all([...this.#connections.values()].map((connection) => connection.dispose())).then(() => undefined);
        return this.#disposed;
    }
}

function permissionKey(server: string, tool: string): string {
    return `${server}/${tool}`;
}

/** The "always" permissions kept on disk; none when the file is missing or unreadable (the user is asked again). */
function readPermissions(file: string): string[] {
    try {
        const document = JSON.parse(fs.readFileSync(file, "utf8")) as { always?: unknown };
        return Array.isArray(document.always) ? document.always.filter((item): item is string => typeof item === "string") : [];
    } catch {
        return [];
    }
}
