import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { waitForWorkspaces } from "./support/appDriver.js";
import { chromiumArgs, chromiumPath, screenshotDirectory } from "./support/openKvault.js";
import { rpcFromPage } from "./support/rpcFromPage.js";
import { startKvaultServer, type KvaultServer } from "./support/startKvaultServer.js";

/** Another local server, on another port of 127.0.0.1: it serves a page and keeps the Cookie header of every request the browser sends it. */
async function startOtherServer(): Promise<{ url: string; cookies: string[]; close(): Promise<void> }> {
    const cookies: string[] = [];
    const server = http.createServer((request, response) => {
        cookies.push(request.headers.cookie ?? "");
        response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
        response.end("<!doctype html><title>another local server</title><p>Another server on this machine.</p>");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        cookies,
        close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())))
    };
}

/** Opens Kvault's RPC from outside a browser, as curl would, with these headers; "open", or the status it was refused with. */
async function replayRpc(url: string, options: { cookie: string; token?: string; origin?: string }): Promise<string> {
    const query = options.token === undefined ? "" : `?session_token=${options.token}`;
    const socket = new WebSocket(`${url.replace("http", "ws")}/rpc${query}`, {
        ...(options.origin === undefined ? {} : { origin: options.origin }),
        headers: { Cookie: options.cookie }
    });
    try {
        return await new Promise<string>((resolve) => {
            socket.once("open", () => resolve("open"));
            socket.once("unexpected-response", (_request, response) => resolve(String(response.statusCode)));
            socket.once("error", (error) => resolve(error.message));
        });
    } finally {
        socket.terminate();
    }
}

/** Whether a page can open Kvault's RPC at `rpcUrl` from its own origin: "open", or "refused" when the socket closes first. */
function openFromPage(page: Page, rpcUrl: string): Promise<string> {
    return page.evaluate<string>(`new Promise((resolve) => {
        const socket = new WebSocket(${JSON.stringify(rpcUrl)});
        const timer = setTimeout(() => { socket.close(); resolve("no answer in 10 s"); }, 10000);
        socket.onopen = () => { clearTimeout(timer); socket.close(); resolve("open"); };
        socket.onclose = () => { clearTimeout(timer); resolve("refused"); };
    })`);
}

// The page is served to anyone on this machine, and carries no secret; a browser gets in only
// through the one-time login link the server printed, as a user would open it.
describe("logging in to the headless server in a real browser", () => {
    let server: KvaultServer;
    const profiles: string[] = [];
    const contexts: BrowserContext[] = [];
    const screenshots: string[] = [];

    /** A fresh Chromium profile: no cookies. */
    const freshBrowser = async (): Promise<BrowserContext> => {
        const profile = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-chromium-"));
        profiles.push(profile);
        const context = await chromium.launchPersistentContext(profile, {
            executablePath: chromiumPath,
            args: chromiumArgs,
            viewport: { width: 1280, height: 820 },
            timeout: 60_000
        });
        contexts.push(context);
        return context;
    };
    const screenshot = async (context: BrowserContext, name: string): Promise<void> => {
        fs.mkdirSync(screenshotDirectory, { recursive: true });
        const file = path.join(screenshotDirectory, `${name}.png`);
        await context.pages()[0]!.screenshot({ path: file });
        screenshots.push(file);
    };

    beforeAll(async () => {
        server = await startKvaultServer();
    });
    afterAll(async () => {
        for (const context of contexts) {
            await context.close().catch(() => undefined);
        }
        for (const profile of profiles) {
            fs.rmSync(profile, { recursive: true, force: true });
        }
        await server?.stop();
        console.log(`screenshots:\n${screenshots.join("\n")}`);
    });

    it("without the link, the page explains where to find it, and holds no secret", async () => {
        const context = await freshBrowser();
        const page = context.pages()[0] ?? (await context.newPage());
        await page.goto(server.url);
        await page.locator('[data-connection="unavailable"]').waitFor({ timeout: 30_000 });
        expect(await page.locator(".connection-reason").textContent()).toContain(
            'Not logged in. Open the login link Kvault printed when it started (the line "Kvault login link (works once): http://…/?token=…" in the output of npm run serve).'
        );
        const html = await page.content();
        expect(html).not.toContain(server.apiKey);
        expect(html).not.toMatch(/[0-9a-f]{64}/);
        await screenshot(context, "login-needed");
    });

    it("the printed link logs the browser in, leaves the address bar without the token, and sets a cookie no script can read", async () => {
        const context = await freshBrowser();
        const page = context.pages()[0] ?? (await context.newPage());
        const link = await server.loginUrl();
        await page.goto(link);
        expect(page.url()).toBe(`${server.url}/`);
        await page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
        await waitForWorkspaces(page);
        expect(await page.evaluate("document.cookie")).toBe("");
        const { port } = new URL(server.url);
        expect(await context.cookies()).toEqual([
            expect.objectContaining({
                name: expect.stringMatching(new RegExp(`^kvault_session_${port}_[0-9a-f]{8}$`)),
                httpOnly: true,
                sameSite: "Strict",
                path: "/",
                expires: -1
            })
        ]);
        expect(await page.content()).not.toContain(server.apiKey);

        // A reload keeps the session.
        await page.reload();
        await page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
        await screenshot(context, "logged-in");

        // The same link in another browser is refused and says where the next one is; that one works.
        const other = await freshBrowser();
        const otherPage = other.pages()[0] ?? (await other.newPage());
        const refused = await otherPage.goto(link);
        expect(refused?.status()).toBe(403);
        expect(await otherPage.locator("h1").textContent()).toBe("This login link was used already");
        await otherPage.goto(await server.loginUrl());
        await otherPage.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
    });

    it("a server on another loopback port receives the browser's cookie but cannot open the RPC with it, nor can its page", async () => {
        const context = await freshBrowser();
        const page = context.pages()[0] ?? (await context.newPage());
        await page.goto(await server.loginUrl());
        await page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
        const other = await startOtherServer();
        try {
            // The browser sends 127.0.0.1's cookies to every port: the other server gets Kvault's session cookie.
            const otherPage = await context.newPage();
            await otherPage.goto(`${other.url}/`);
            const [kvaultCookie] = await context.cookies(server.url);
            const captured = other.cookies.find((header) => header.includes(`${kvaultCookie!.name}=`));
            expect(captured, `the other server's requests carried: ${JSON.stringify(other.cookies)}`).toBeDefined();

            // Replayed from outside a browser: without an Origin, with the other port's, or with Kvault's but without the page's RPC token.
            expect(await replayRpc(server.url, { cookie: captured! })).toBe("403");
            expect(await replayRpc(server.url, { cookie: captured!, origin: other.url })).toBe("403");
            expect(await replayRpc(server.url, { cookie: captured!, origin: server.url })).toBe("401");
            expect(await replayRpc(server.url, { cookie: captured!, origin: server.url, token: "0".repeat(64) })).toBe("401");

            // The other port's page, in the same browser, gets neither Kvault's RPC nor its token (another origin's localStorage).
            const rpcUrl = `${server.url.replace("http", "ws")}/rpc`;
            expect(await otherPage.evaluate(`localStorage.getItem("kvault.sessionToken")`)).toBeNull();
            expect(await openFromPage(otherPage, rpcUrl)).toBe("refused");
            expect(await openFromPage(otherPage, `${rpcUrl}?session_token=${"0".repeat(64)}`)).toBe("refused");
            await otherPage.evaluate(
                `fetch(${JSON.stringify(`${server.url}/logout`)}, { method: "POST", credentials: "include" }).catch(() => undefined)`
            );

            // Kvault's own page still works, on the same session.
            expect(await rpcFromPage(page, "info")).toMatchObject({ modelName: expect.any(String) });
            await page.reload();
            await page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
        } finally {
            await other.close();
        }
    });

    it("Log out ends the session on the server: the page says how to log in again, and the old cookie and token open nothing", async () => {
        const context = await freshBrowser();
        const page = context.pages()[0] ?? (await context.newPage());
        await page.goto(await server.loginUrl());
        await page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
        const [cookie] = await context.cookies(server.url);
        const old = {
            cookie: `${cookie!.name}=${cookie!.value}`,
            token: await page.evaluate<string>(`localStorage.getItem("kvault.sessionToken")`)
        };
        expect(await replayRpc(server.url, { ...old, origin: server.url })).toBe("open"); // what the page itself sends

        await page.getByRole("button", { name: "Log out" }).click();
        await page.locator('[data-connection="unavailable"]').waitFor({ timeout: 30_000 });
        expect(await page.locator(".connection-reason").textContent()).toContain("Not logged in. Open the login link Kvault printed");
        expect(await page.getByRole("button", { name: "Log out" }).count()).toBe(0);
        expect(await context.cookies(server.url)).toEqual([]);
        expect(await page.evaluate(`localStorage.getItem("kvault.sessionToken")`)).toBeNull();
        expect(await replayRpc(server.url, { ...old, origin: server.url })).toBe("401");
        await screenshot(context, "logged-out");

        // A new link logs in again.
        await page.goto(await server.loginUrl());
        await page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
    });

    it("no other site can show the app in a frame", async () => {
        const context = await freshBrowser();
        const page = context.pages()[0] ?? (await context.newPage());
        const refusals: string[] = [];
        page.on("console", (message) => refusals.push(message.text()));
        await page.setContent(`<iframe id="kvault" src="${server.url}/" width="600" height="400"></iframe>`);
        await expect
            .poll(() => refusals.join("\n"), { timeout: 30_000 })
            .toMatch(
                /Refused to (display|frame)|Framing .* violates the following Content Security Policy directive: "frame-ancestors 'none'"/
            );
        const frame = await (await page.$("#kvault"))!.contentFrame();
        expect(await frame!.locator(".connection-badge").count()).toBe(0);
    });
});
