import fs from "node:fs";
import os from "node:os";
import path from "node:path";
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
    /** More `npm run serve` options for this suite's server; a function is read when the server starts, as `seed` is. */
    readonly serveArgs?: readonly string[] | (() => readonly string[]);
    /** false: the server starts without the tests' engine options, on the defaults a user gets (startKvaultServer's `engineArgs`). */
    readonly engineArgs?: boolean;
    /**
     * Workspaces and chats the server starts with (seedChats.ts), in a data directory removed after the suite; an empty one when absent.
     * A function is read when the server starts, for chats that name something an earlier hook started (a stand-in's URL).
     */
    readonly seed?: readonly SeededWorkspace[] | (() => readonly SeededWorkspace[]);
    /** Files written into the data directory before the server starts, by name (mcp.json); in a fresh one when there is no seed. */
    readonly files?: () => Readonly<Record<string, string>>;
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
        dataDir = dataDirectory(options);
        server = await startKvaultServer({
            dataDir,
            extraArgs: typeof options.serveArgs === "function" ? options.serveArgs() : options.serveArgs,
            env: options.env?.(),
            engineArgs: options.engineArgs
        });
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

/** The suite's data directory: the seeded chats and the files, or none (the server's own, empty) when the suite gives neither. */
function dataDirectory({ seed, files }: KvaultAppOptions): string | undefined {
    const workspaces = typeof seed === "function" ? seed() : seed;
    const written = files?.();
    if (workspaces === undefined && written === undefined) {
        return undefined;
    }
    const dataDir = workspaces === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), "kvault-e2e-data-")) : seedChats(workspaces);
    for (const [name, text] of Object.entries(written ?? {})) {
        fs.writeFileSync(path.join(dataDir, name), text);
    }
    return dataDir;
}
