// MCP tools in the chat, in real Chromium against the headless server: servers from the data
// directory's mcp.json (the test server of test/support/mcpTestServer.ts over stdio, and over
// streamable HTTP on loopback), listed in the settings with their state and tools; a workspace
// offers one server's tools, the answer is held to a call of it (Begin each answer with a tool
// call: the generated model writes random text otherwise), the user allows it, and its result is
// shown collapsed and counted on the meter; a server that hangs, crashes or writes garbage, and a
// result larger than the window, end their call with a named error and the turn goes on to an answer.
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lookupAnswer, startMcpHttpServer } from "../support/mcpTestServer.js";
import { configureWorkspace, newWorkspace, openSettingsPanel, sendMessage, storedWorkspaces } from "./support/appDriver.js";
import { repositoryRoot } from "./support/startKvaultServer.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

const serverScript = path.join(repositoryRoot, "test/support/mcpTestServer.ts");
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const stdio = (tools: string, timeout: number) => ({
    command: process.execPath,
    args: ["--import", tsx, serverScript, "--stdio", "--tools", tools],
    timeout
});

describe("MCP tools in the chat, in a real browser", () => {
    let http: Awaited<ReturnType<typeof startMcpHttpServer>>;

    // Registered before the app's hooks: the HTTP MCP server listens before mcp.json names it, and stops after the app.
    beforeAll(async () => {
        http = await startMcpHttpServer();
    });
    afterAll(async () => {
        await http?.close();
    });

    const kvault = useKvaultApp({
        files: () => ({
            "mcp.json": JSON.stringify({
                mcpServers: {
                    shelf: stdio("lookup", 30_000),
                    stuck: stdio("hang", 1_500),
                    broken: stdio("crash", 30_000),
                    noisy: stdio("garbage", 30_000),
                    flooded: stdio("flood", 30_000),
                    web: { url: http.url, timeout: 30_000 }
                }
            })
        }),
        // A tool's description takes room in the prompt: a window wider than the browser tests' 512.
        serveArgs: ["--context", "2048"]
    });
    const { screenshots } = kvault;

    it("lists every server with its state and tools in the settings", async () => {
        const { page } = kvault.app();
        await openSettingsPanel(page);
        const servers = page.locator("[data-mcp-server]");
        await expect.poll(() => servers.count(), { timeout: 60_000 }).toBe(6);
        for (const name of ["shelf", "stuck", "broken", "noisy", "flooded", "web"]) {
            await expect
                .poll(
                    async () => {
                        await page.getByRole("button", { name: "Refresh the MCP servers" }).click();
                        return page.locator(`[data-mcp-server="${name}"]`).getAttribute("data-mcp-state");
                    },
                    { timeout: 60_000, interval: 500 }
                )
                .toBe("connected");
        }
        expect(await page.locator('[data-mcp-server="shelf"] [data-mcp-tool]').allTextContents()).toEqual([
            "lookup: Finds the shelf a key is filed under."
        ]);
        expect(await page.locator('[data-mcp-server="web"] [data-mcp-tool]').count()).toBe(6);
        screenshots.push(await kvault.app().screenshot("mcp-settings"));
    });

    it("calls the tool after the permission prompt, shows its result collapsed and counts it on the meter", async () => {
        const { page } = kvault.app();
        await offerTools(page, "shelf");
        await sendMessage(page, "Where is atlas filed?");

        const prompt = page.locator("[data-tool-prompt]");
        await prompt.waitFor({ timeout: 180_000 });
        expect(await prompt.textContent()).toContain("lookup");
        expect(await prompt.locator("pre").textContent()).toMatch(/^\{"key":"(atlas|bravo)"\}$/);
        screenshots.push(await kvault.app().screenshot("mcp-permission-prompt"));
        await page.getByRole("button", { name: "Allow once" }).click();

        const answer = await storedAnswer(page);
        const [call] = answer.toolCalls!;
        const key = (JSON.parse(call!.arguments) as { key: string }).key;
        expect(call).toMatchObject({ server: "shelf", tool: "lookup", result: lookupAnswer(key) });
        expect(call!.numTokens).toBeGreaterThan(0);

        const card = page.locator(`.message-assistant [data-tool-call="${call!.callId}"]`);
        await card.waitFor({ timeout: 30_000 });
        expect(await card.getAttribute("open"), "collapsed").toBeNull();
        expect(await card.locator("[data-tool-tokens]").getAttribute("data-tool-tokens")).toBe(String(call!.numTokens));
        await card.locator("summary").click();
        expect(await card.locator("[data-tool-result]").textContent()).toBe(lookupAnswer(key));

        // The meter counts the conversation with the result in it: more than the result's own tokens.
        const meter = page.locator(".context-meter");
        await expect.poll(async () => Number(await meter.getAttribute("data-used")), { timeout: 30_000 }).toBeGreaterThan(call!.numTokens!);
        screenshots.push(await kvault.app().screenshot("mcp-tool-card"));
        expect(kvault.app().problems).toEqual([]);
    });

    const failures = [
        { server: "stuck", code: "mcp_tool_timeout", what: "a tool that hangs" },
        { server: "broken", code: "mcp_server_crashed", what: "a server that exits mid-call" },
        { server: "noisy", code: "mcp_malformed_reply", what: "a server that writes garbage" },
        { server: "flooded", code: "mcp_result_too_large", what: "a result larger than the window" }
    ];
    for (const { server: name, code, what } of failures) {
        it(`ends the call of ${what} with ${code}, and the chat goes on to an answer`, async () => {
            const { page } = kvault.app();
            await newWorkspace(page);
            await offerTools(page, name);
            await sendMessage(page, `Use the ${name} tool`);
            await page.locator("[data-tool-prompt]").waitFor({ timeout: 180_000 });
            await page.getByRole("button", { name: "Allow for this chat" }).click();
            const answer = await storedAnswer(page);
            expect(answer.toolCalls).toEqual([
                expect.objectContaining({ server: name, error: expect.objectContaining({ code }) as unknown })
            ]);
            const card = page.locator(`.message-assistant [data-tool-error="${code}"]`);
            await card.waitFor({ timeout: 30_000 });
            expect(await card.locator("summary").textContent()).toContain(code);
            screenshots.push(await kvault.app().screenshot(`mcp-${code}`));
            expect(await page.getByRole("alert").count(), "no turn failed").toBe(0);
            expect(kvault.app().problems).toEqual([]);
        });
    }
});

/** The selected workspace offers only `server`'s tools, and its answers begin with a call (the grammar holds it). */
async function offerTools(page: Page, server: string): Promise<void> {
    await configureWorkspace(page, { temperature: 0, maxTokens: 160 });
    const details = page.locator(".workspace-settings");
    await details.locator("summary").click();
    await page.getByLabel(`Offer the tools of ${server}`).check();
    await page.getByLabel("Begin each answer with a tool call").check();
    await details.locator("summary").click();
    // The host reads the workspace's tools from its stored settings: wait for the page's saves (sent in order) to reach it.
    const selected = await page.locator(".workspace-item.selected").getAttribute("data-workspace-id");
    await expect
        .poll(
            async () => {
                const settings = (await storedWorkspaces(page)).find((workspace) => workspace.id === selected)?.settings;
                return settings?.toolChoice === "required" && settings.mcpServers?.includes(server) === true && settings.maxTokens === 160;
            },
            { timeout: 60_000, interval: 250 }
        )
        .toBe(true);
}

/** The selected workspace's answer once the host kept it. */
async function storedAnswer(page: Page) {
    const selected = await page.locator(".workspace-item.selected").getAttribute("data-workspace-id");
    let answer: Awaited<ReturnType<typeof storedWorkspaces>>[number]["messages"][number] | undefined;
    await expect
        .poll(
            async () => {
                const workspaces = await storedWorkspaces(page);
                const workspace = workspaces.find((item) => item.id === selected) ?? workspaces.at(-1);
                answer = workspace?.messages.find((message) => message.role === "assistant");
                return answer !== undefined;
            },
            { timeout: 180_000, interval: 500 }
        )
        .toBe(true);
    return answer!;
}
