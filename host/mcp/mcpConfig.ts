// mcp.json in the data directory, in the format LM Studio and Cursor use:
// {"mcpServers": {"NAME": {"command", "args", "env", "cwd"} | {"url", "headers"}}}, each with an
// optional "timeout" (ms) for its calls. Read once when the host starts, validated here, then
// frozen. Fields other clients add (e.g. "type") are ignored; a bad entry fails that server alone.
import fs from "node:fs";
import { McpConfigInvalidError } from "./mcpErrors.js";

/** Limits of mcp.json's entries. */
export const mcpConfigLimits = Object.freeze({
    maxServers: 64,
    maxFileBytes: 1_048_576,
    /** A call's timeout when the entry gives none. */
    defaultTimeoutMs: 60_000,
    minTimeoutMs: 100,
    maxTimeoutMs: 3_600_000,
    namePattern: /^[A-Za-z0-9_-]{1,64}$/
});

interface CommonEntry {
    readonly name: string;
    readonly timeoutMs: number;
}

export type McpServerConfig =
    | (CommonEntry & {
          readonly transport: "stdio";
          readonly command: string;
          readonly args: readonly string[];
          readonly env: Readonly<Record<string, string>>;
          readonly cwd?: string;
      })
    | (CommonEntry & { readonly transport: "http"; readonly url: string; readonly headers: Readonly<Record<string, string>> });

/** One entry: its config, or why it cannot be used. */
export type McpServerEntry =
    | { readonly ok: true; readonly config: McpServerConfig }
    | { readonly ok: false; readonly name: string; readonly error: McpConfigInvalidError };

/** The servers of `file`; none when it does not exist. Throws McpConfigInvalidError when the file as a whole cannot be read. */
export function readMcpConfig(file: string): McpServerEntry[] {
    let bytes: Buffer;
    try {
        bytes = fs.readFileSync(file);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
            return [];
        }
        throw new McpConfigInvalidError(`${file} could not be read (${(error as Error).message}); check its permissions.`);
    }
    if (bytes.length > mcpConfigLimits.maxFileBytes) {
        throw new McpConfigInvalidError(
            `${file} has ${bytes.length.toLocaleString("en-US")} bytes; mcp.json may have at most ${mcpConfigLimits.maxFileBytes.toLocaleString("en-US")}.`
        );
    }
    let document: unknown;
    try {
        document = JSON.parse(bytes.toString("utf8"));
    } catch (error) {
        throw new McpConfigInvalidError(`${file} is not JSON (${(error as Error).message}); fix it and restart Kvault.`);
    }
    const servers = isObject(document) ? document.mcpServers : undefined;
    if (!isObject(servers)) {
        throw new McpConfigInvalidError(`${file} has no "mcpServers" object; write {"mcpServers": {"NAME": {"command": …}}}.`);
    }
    const names = Object.keys(servers);
    if (names.length > mcpConfigLimits.maxServers) {
        throw new McpConfigInvalidError(`${file} names ${names.length} servers; at most ${mcpConfigLimits.maxServers} are served.`);
    }
    return names.map((name) => readEntry(name, servers[name]));
}

function readEntry(name: string, entry: unknown): McpServerEntry {
    try {
        return { ok: true, config: readServer(name, entry) };
    } catch (error) {
        if (error instanceof McpConfigInvalidError) {
            return { ok: false, name, error };
        }
        throw error;
    }
}

function readServer(name: string, entry: unknown): McpServerConfig {
    const fail = (why: string): never => {
        throw new McpConfigInvalidError(`mcp.json's server "${name}" ${why}`);
    };
    if (!mcpConfigLimits.namePattern.test(name)) {
        fail("has a name Kvault cannot use; name it with 1 to 64 letters, digits, '_' or '-'.");
    }
    if (!isObject(entry)) {
        return fail('is not an object; give it a "command" or a "url".');
    }
    const { minTimeoutMs, maxTimeoutMs } = mcpConfigLimits;
    const timeout = entry.timeout ?? mcpConfigLimits.defaultTimeoutMs;
    if (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < minTimeoutMs || timeout > maxTimeoutMs) {
        fail(
            `has timeout ${JSON.stringify(timeout)}; give a whole number of milliseconds from ${minTimeoutMs} to ${maxTimeoutMs.toLocaleString("en-US")}.`
        );
    }
    const common = { name, timeoutMs: timeout as number };
    if (typeof entry.command === "string" && entry.command !== "") {
        const args = entry.args ?? [];
        if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string")) {
            fail('has "args" that are not a list of strings.');
        }
        const cwd = entry.cwd;
        if (cwd !== undefined && typeof cwd !== "string") {
            fail('has a "cwd" that is not a string.');
        }
        return {
            ...common,
            transport: "stdio",
            command: entry.command,
            args: args as string[],
            env: stringRecord(entry.env, "env", fail),
            ...(cwd === undefined ? {} : { cwd: cwd as string })
        };
    }
    if (typeof entry.url === "string") {
        let url: URL;
        try {
            url = new URL(entry.url);
        } catch {
            return fail(`has url ${JSON.stringify(entry.url)}, which is not a URL; give http(s)://host:port/path.`);
        }
        if (url.protocol !== "http:" && url.protocol !== "https:") {
            fail(`has url ${JSON.stringify(entry.url)}; only http and https servers are served.`);
        }
        return { ...common, transport: "http", url: url.href, headers: stringRecord(entry.headers, "headers", fail) };
    }
    return fail('has neither a "command" (a stdio server) nor a "url" (a streamable HTTP server).');
}

function stringRecord(value: unknown, field: string, fail: (why: string) => never): Record<string, string> {
    if (value === undefined) {
        return {};
    }
    if (!isObject(value) || !Object.values(value).every((item) => typeof item === "string")) {
        fail(`has "${field}" that is not an object of strings.`);
    }
    return value as Record<string, string>;
}

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
