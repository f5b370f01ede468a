import fs from "node:fs";
import { afterAll, beforeAll } from "vitest";
import { openKvault, type KvaultPage } from "./openKvault.js";
import { seedChats, type SeededWorkspace } from "./seedChats.js";
import { startKvaultServer, type KvaultServer } from "./startKvaultServer.js";

export interface KvaultApp {
    /** The browser page, once `beforeAll` has opened it. */
    readonly app: () => KvaultPage;
    readonly server: () => KvaultServer;
    /** Paths of the screenshots taken, listed when the suite ends. */
    readonly screenshots: string[];
}

export interface KvaultAppOptions {
    readonly viewport?: { readonly width: number; readonly height: number };
    /** Runs once the page is open, before the first test (fold or open panels). */
    readonly prepare?: (app: KvaultPage) => Promise<void>;
    /** More `npm run serve` options for this suite's server. */
    readonly serveArgs?: readonly string[];
    /** Workspaces and chats the server starts with (seedChats.ts), in a data directory removed after the suite; an empty one when absent. */
    readonly seed?: readonly SeededWorkspace[];
    /** More environment for the server, read when it starts (a stand-in registered before this hook knows its URL by then). */
    readonly env?: () => Readonly<Record<string, string>>;
}

/** One headless server and one fresh browser for a describe block, both stopped after it. */
export function useKvaultApp(options: KvaultAppOptions = {}): KvaultApp {
    let dataDir: string | undefined;
    let server: KvaultServer | undefined;
    let app: KvaultPage | undefined;
    const screenshots: string[] = [];
    beforeAll(async () => {
        dataDir = options.seed === undefined ? undefined : seedChats(options.seed);
        server = await startKvaultServer({ dataDir, extraArgs: options.serveArgs, env: options.env?.() });
        app = await openKvault(await server.loginUrl(), options.viewport);
        await options.prepare?.(app);
    });
    afterAll(async () => {
        await app?.close();
        await server?.stop();
        if (dataDir !== undefined) {
            fs.rmSync(dataDir, { recursive: true, force: true });
        }
        console.log(`screenshots:\n${screenshots.join("\n")}`);
    });
    return { app: () => app!, server: () => server!, screenshots };
}
