import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { repositoryRoot } from "./startKvaultServer.js";

/** Debian's Chromium; never a downloaded one. */
export const chromiumPath = process.env.KVAULT_CHROMIUM ?? "/usr/bin/chromium";

export const chromiumArgs = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync"
];

export const screenshotDirectory = path.join(repositoryRoot, "test", ".artifacts", "screenshots");

export interface KvaultPage {
    readonly context: BrowserContext;
    readonly page: Page;
    /** Uncaught page errors and console messages about the Content-Security-Policy: each one is a bug. */
    readonly problems: string[];
    /** Saves a screenshot under test/.artifacts/screenshots and returns its path. */
    screenshot(name: string): Promise<string>;
    /** Closes the browser and removes its profile. Idempotent. */
    close(): Promise<void>;
}

/**
 * Chromium with a fresh profile, logged in as a user would: it opens `loginUrl` (a one-time link
 * the server printed, KvaultServer.loginUrl), which sets the session cookie and lands on the app,
 * and returns once the app says it is connected and has the server's workspaces. `initScript`
 * runs in the page before the app does (say, to leave what an older Kvault kept in localStorage).
 */
export async function openKvault(loginUrl: string, viewport = { width: 1280, height: 820 }, initScript?: string): Promise<KvaultPage> {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-chromium-"));
    let context: BrowserContext | undefined;
    let closed: Promise<void> | undefined;
    const close = (): Promise<void> =>
        (closed ??= (async () => {
            await context?.close().catch(() => undefined);
            fs.rmSync(profile, { recursive: true, force: true });
        })());
    try {
        context = await chromium.launchPersistentContext(profile, {
            executablePath: chromiumPath,
            args: chromiumArgs,
            viewport,
            timeout: 60_000
        });
        await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(loginUrl).origin });
        const page = context.pages()[0] ?? (await context.newPage());
        const problems: string[] = [];
        page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
        page.on("console", (message) => {
            if (/Content.Security.Policy|Refused to/i.test(message.text())) {
                problems.push(`console: ${message.text()}`);
            }
        });
        if (initScript !== undefined) {
            await page.addInitScript(initScript);
        }
        await page.goto(loginUrl);
        await page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
        // The workspaces come from the server once connected; tests start from the loaded list.
        await page.locator('.workspace-list[data-load="ready"]').waitFor({ timeout: 30_000 });
        fs.mkdirSync(screenshotDirectory, { recursive: true });
        return {
            context,
            page,
            problems,
            close,
            async screenshot(name) {
                const file = path.join(screenshotDirectory, `${name}.png`);
                await page.screenshot({ path: file });
                return file;
            }
        };
    } catch (error) {
        await close();
        throw error;
    }
}
