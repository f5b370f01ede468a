import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mcpConfigLimits, readMcpConfig } from "../../../../host/mcp/mcpConfig.js";

const directories: string[] = [];

afterEach(() => {
    for (const directory of directories.splice(0)) {
        fs.rmSync(directory, { recursive: true, force: true });
    }
});

function configFile(text: string): string {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-mcp-config-"));
    directories.push(directory);
    const file = path.join(directory, "mcp.json");
    fs.writeFileSync(file, text);
    return file;
}

describe("readMcpConfig", () => {
    it("reads stdio and HTTP entries as LM Studio and Cursor write them, ignoring fields other clients add", () => {
        const file = configFile(
            JSON.stringify({
                mcpServers: {
                    files: { command: "npx", args: ["-y", "server"], env: { ROOT: "/tmp" }, type: "stdio" },
                    search: { url: "http://127.0.0.1:8808/mcp", headers: { Authorization: "Bearer x" }, timeout: 5_000 }
                }
            })
        );
        expect(readMcpConfig(file)).toEqual([
            {
                ok: true,
                config: {
                    name: "files",
                    transport: "stdio",
                    command: "npx",
                    args: ["-y", "server"],
                    env: { ROOT: "/tmp" },
                    timeoutMs: mcpConfigLimits.defaultTimeoutMs
                }
            },
            {
                ok: true,
                config: {
                    name: "search",
                    transport: "http",
                    url: "http://127.0.0.1:8808/mcp",
                    headers: { Authorization: "Bearer x" },
                    timeoutMs: 5_000
                }
            }
        ]);
    });

    it("has no servers when the file does not exist", () => {
        expect(readMcpConfig(path.join(os.tmpdir(), "no-such-dir-kvault", "mcp.json"))).toEqual([]);
    });

    it("fails a bad entry alone, by name and with what to do", () => {
        const entries = readMcpConfig(
            configFile(
                JSON.stringify({
                    mcpServers: {
                        good: { command: "node" },
                        neither: { args: ["x"] },
                        slow: { command: "node", timeout: 10 },
                        ftp: { url: "ftp://example.com/mcp" },
                        "bad name": { command: "node" }
                    }
                })
            )
        );
        expect(entries.map((entry) => (entry.ok ? "ok" : entry.error.message))).toEqual([
            "ok",
            'mcp.json\'s server "neither" has neither a "command" (a stdio server) nor a "url" (a streamable HTTP server).',
            'mcp.json\'s server "slow" has timeout 10; give a whole number of milliseconds from 100 to 3,600,000.',
            'mcp.json\'s server "ftp" has url "ftp://example.com/mcp"; only http and https servers are served.',
            "mcp.json's server \"bad name\" has a name Kvault cannot use; name it with 1 to 64 letters, digits, '_' or '-'."
        ]);
        expect(entries.filter((entry) => !entry.ok).map((entry) => !entry.ok && entry.error.code)).toEqual(
            Array(4).fill("mcp_config_invalid")
        );
    });

    it("refuses a file that is not JSON, or has no mcpServers, with mcp_config_invalid", () => {
        expect(() => readMcpConfig(configFile("{ not json"))).toThrow(expect.objectContaining({ code: "mcp_config_invalid" }));
        expect(() => readMcpConfig(configFile('{"servers": {}}'))).toThrow(/has no "mcpServers" object/);
    });
});
