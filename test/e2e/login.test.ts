import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForWorkspaces } from "./support/appDriver.js";
import { chromiumArgs, chromiumPath, screenshotDirectory } from "./support/openKvault.js";
import { startKvaultServer, type KvaultServer } from "./support/startKvaultServer.js";

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
            expect.objectContaining({ name: `kvault_session_${port}`, httpOnly: true, sameSite: "Strict", path: "/", expires: -1 })
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
