import { afterAll, beforeAll } from "vitest";
import { openKvault, type KvaultPage } from "./openKvault.js";
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
}

/** One headless server and one fresh browser for a describe block, both stopped after it. */
export function useKvaultApp(options: KvaultAppOptions = {}): KvaultApp {
    let server: KvaultServer | undefined;
    let app: KvaultPage | undefined;
    const screenshots: string[] = [];
    beforeAll(async () => {
        server = await startKvaultServer({ extraArgs: options.serveArgs });
        app = await openKvault(await server.loginUrl(), options.viewport);
        await options.prepare?.(app);
    });
    afterAll(async () => {
        await app?.close();
        await server?.stop();
        console.log(`screenshots:\n${screenshots.join("\n")}`);
    });
    return { app: () => app!, server: () => server!, screenshots };
}
