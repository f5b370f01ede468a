// The host's MCP manager against a real MCP server written with the SDK (test/support/mcpTestServer.ts),
// over stdio (a child process) and streamable HTTP on loopback: tools listed, a call answered, and
// a hanging, crashing or garbage-writing tool ending its call with a named error while the manager
// (and the next call) goes on.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { McpManager } from "../../../host/mcp/McpManager.js";
import { lookupAnswer, startMcpHttpServer } from "../../support/mcpTestServer.js";

const serverScript = path.resolve("test/support/mcpTestServer.ts");
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
        await cleanup();
    }
});

function managerWith(servers: Record<string, unknown>): McpManager {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-mcp-"));
    fs.writeFileSync(path.join(directory, "mcp.json"), JSON.stringify({ mcpServers: servers }));
    const manager = new McpManager(directory, () => undefined);
    cleanups.push(async () => {
        await manager.dispose();
        fs.rmSync(directory, { recursive: true, force: true });
    });
    return manager;
}

const stdioServer = (timeout = 1_500) => ({ command: process.execPath, args: ["--import", tsx, serverScript, "--stdio"], timeout });

describe("McpManager", () => {
    it("lists a stdio server's tools and calls one", async () => {
        const manager = managerWith({ tools: stdioServer() });
        await manager.connectAll();
        const [server] = manager.list().servers;
        expect(server).toMatchObject({ name: "tools", transport: "stdio", state: "connected" });
        expect(server!.tools.map((tool) => tool.name)).toEqual(["lookup", "hang", "crash", "garbage", "flood", "big"]);
        const offered = await manager.tools(["tools"]);
        expect(offered[0]).toMatchObject({ name: "tools__lookup", server: "tools", tool: "lookup" });
        expect(await manager.call("tools", "lookup", { key: "atlas" })).toBe(lookupAnswer("atlas"));
    });

    it("lists and calls a streamable HTTP server's tool on loopback", async () => {
        const http = await startMcpHttpServer();
        cleanups.push(() => http.close());
        const manager = managerWith({ web: { url: http.url, timeout: 1_500 } });
        await manager.connectAll();
        expect(manager.list().servers[0]).toMatchObject({ name: "web", transport: "http", state: "connected" });
        expect(await manager.call("web", "lookup", { key: "bravo" })).toBe(lookupAnswer("bravo"));
        await expect(manager.call("web", "hang", {})).rejects.toMatchObject({ code: "mcp_tool_timeout" });
        expect(await manager.call("web", "lookup", { key: "atlas" })).toBe(lookupAnswer("atlas"));
    });

    it("ends a hanging call with mcp_tool_timeout, and the server answers the next call", async () => {
        const manager = managerWith({ tools: stdioServer() });
        await expect(manager.call("tools", "hang", {})).rejects.toMatchObject({
            code: "mcp_tool_timeout",
            message: expect.stringContaining("1,500 ms") as unknown
        });
        expect(await manager.call("tools", "lookup", { key: "atlas" })).toBe(lookupAnswer("atlas"));
    });

    it("ends a call whose server exits mid-call with mcp_server_crashed, lists it failed, and starts it again on the next call", async () => {
        const manager = managerWith({ tools: stdioServer(20_000) });
        await expect(manager.call("tools", "crash", {})).rejects.toMatchObject({ code: "mcp_server_crashed" });
        expect(manager.list().servers[0]).toMatchObject({ state: "failed", error: { code: "mcp_server_crashed" } });
        expect(await manager.call("tools", "lookup", { key: "bravo" })).toBe(lookupAnswer("bravo"));
        expect(manager.list().servers[0]).toMatchObject({ state: "connected" });
    });

    it("ends a call answered with a line that is not JSON-RPC with mcp_malformed_reply", async () => {
        const manager = managerWith({ tools: stdioServer(20_000) });
        await expect(manager.call("tools", "garbage", {})).rejects.toMatchObject({ code: "mcp_malformed_reply" });
        expect(await manager.call("tools", "lookup", { key: "atlas" })).toBe(lookupAnswer("atlas"));
    });

    it("lists a server that cannot start as failed with why, and a bad entry by name, beside a good one", async () => {
        const manager = managerWith({
            missing: { command: path.join(os.tmpdir(), "no-such-mcp-server"), timeout: 1_500 },
            odd: { args: ["x"] },
            tools: stdioServer()
        });
        await manager.connectAll();
        const byName = Object.fromEntries(manager.list().servers.map((server) => [server.name, server]));
        expect(byName.missing).toMatchObject({ state: "failed", error: { code: "mcp_server_unavailable" } });
        expect(byName.odd).toMatchObject({ state: "failed", error: { code: "mcp_config_invalid" } });
        expect(byName.tools).toMatchObject({ state: "connected" });
        await expect(manager.call("missing", "lookup", {})).rejects.toMatchObject({ code: "mcp_server_unavailable" });
    });

    it("keeps 'for this chat' for that workspace until its chat is cleared, and 'always' in mcp-permissions.json across restarts", async () => {
        const manager = managerWith({ tools: stdioServer() });
        const directory = path.dirname(manager.configPath);
        manager.remember("w1", "tools", "lookup", "chat");
        expect([manager.allowed("w1", "tools", "lookup"), manager.allowed("w2", "tools", "lookup")]).toEqual([true, false]);
        manager.forgetChat("w1");
        expect(manager.allowed("w1", "tools", "lookup")).toBe(false);
        manager.remember("w1", "tools", "hang", "once");
        manager.remember("w1", "tools", "big", "always");
        const file = path.join(directory, "mcp-permissions.json");
        for (let attempt = 0; attempt < 100 && !fs.existsSync(file); attempt++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const restarted = new McpManager(directory, () => undefined);
        cleanups.push(() => restarted.dispose());
        expect([restarted.allowed("w9", "tools", "big"), restarted.allowed("w1", "tools", "hang")]).toEqual([true, false]);
    });

    it("dispose is idempotent and ends the stdio server", async () => {
        const manager = managerWith({ tools: stdioServer() });
        await manager.connectAll();
        await Promise.all([manager.dispose(), manager.dispose()]);
        await expect(manager.call("tools", "lookup", { key: "atlas" })).rejects.toMatchObject({ code: "mcp_server_unavailable" });
    });
});
