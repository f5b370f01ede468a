import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { openKvault, type KvaultPage } from "./openKvault.js";
import { seedChats, type SeededWorkspace } from "./seedChats.js";
import { startKvaultServer, type KvaultServer } from "./startKvaultServer.js";

export interface KvaultApp {
    /** The browser page, once `beforeAll` has opened it; a new one after each `restart`. */
    readonly app: () => KvaultPage;
    /** The server, once `beforeAll` has started it; a new one after each `restart`, on the same data directory. */
    readonly server: () => KvaultServer;
    /** Paths of the screenshots taken, listed when the suite ends. */
    readonly screenshots: string[];
    /**
     * Closes the page and stops the server, then starts a new server on the same data directory and
     * opens a fresh page on it (and runs `prepare` again): what the page shows then came from disk.
     */
    restart(options?: KvaultRestartOptions): Promise<void>;
}

export interface KvaultRestartOptions {
    /** The `npm run serve` options of the new server, in place of the suite's `serveArgs` (for this start only). */
    readonly serveArgs?: readonly string[];
    /** Runs while no server runs, before the new one starts (a test that reads or writes the data directory then). */
    readonly whileStopped?: (dataDir: string) => void | Promise<void>;
}

export interface KvaultAppOptions {
    readonly viewport?: { readonly width: number; readonly height: number };
    /** Runs once the page is open, before the first test (fold or open panels); again on each page a `restart` opens. */
    readonly prepare?: (app: KvaultPage) => Promise<void>;
    /** Runs in the page before the app does, on every page opened (openKvault's `initScript`). */
    readonly initScript?: string;
    /** More `npm run serve` options for this suite's server; a function is read when the server starts, as `seed` is. */
    readonly serveArgs?: readonly string[] | (() => readonly string[]);
    /** false: the server starts without the tests' engine options, on the defaults a user gets (startKvaultServer's `engineArgs`). */
    readonly engineArgs?: boolean;
    /**
     * Workspaces and chats the server starts with (seedChats.ts), in a data directory removed after the suite; an empty one when absent.
     * A function is read when the server starts, for chats that name something an earlier hook started (a stand-in's URL).
     */
    readonly seed?: readonly SeededWorkspace[] | (() => readonly SeededWorkspace[]);
    /**
     * Files written into the data directory before the server first starts, by path relative to it
     * (`mcp.json`, `workspaces/index.json`: folders are made); in a fresh one when there is no seed.
     */
    readonly files?: () => Readonly<Record<string, string>>;
    /** More environment for the server, read when it starts (a stand-in registered before this hook knows its URL by then). */
    readonly env?: () => Readonly<Record<string, string>>;
}

/**
 * One headless server and one fresh browser for a describe block, both stopped after it, on a data
 * directory of the suite's own that outlives a `restart` and is removed after the suite.
 */
export function useKvaultApp(options: KvaultAppOptions = {}): KvaultApp {
    let dataDir: string | undefined;
    let server: KvaultServer | undefined;
    let app: KvaultPage | undefined;
    const screenshots: string[] = [];
    const start = async (serveArgs: readonly string[] | undefined): Promise<void> => {
        server = await startKvaultServer({ dataDir, extraArgs: serveArgs, env: options.env?.(), engineArgs: options.engineArgs });
        app = await openKvault(await server.loginUrl(), options.viewport, options.initScript);
        await options.prepare?.(app);
    };
    const stop = async (): Promise<void> => {
        await app?.close();
        await server?.stop();
    };
    beforeAll(async () => {
        dataDir = dataDirectory(options);
        await start(typeof options.serveArgs === "function" ? options.serveArgs() : options.serveArgs);
    });
    afterAll(async () => {
        await stop();
        if (dataDir !== undefined) {
            fs.rmSync(dataDir, { recursive: true, force: true });
        }
        console.log(`screenshots:\n${screenshots.join("\n")}`);
    });
    const restart = async (restartOptions: KvaultRestartOptions = {}): Promise<void> => {
        await stop();
        await restartOptions.whileStopped?.(dataDir!);
        const serveArgs = typeof options.serveArgs === "function" ? options.serveArgs() : options.serveArgs;
        await start(restartOptions.serveArgs ?? serveArgs);
    };
    return { app: () => app!, server: () => server!, screenshots, restart };
}

/** The suite's data directory: the seeded chats and the files, or an empty one; kept across restarts, as a user's is. */
function dataDirectory({ seed, files }: KvaultAppOptions): string {
    const workspaces = typeof seed === "function" ? seed() : seed;
    const dataDir = workspaces === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), "kvault-e2e-data-")) : seedChats(workspaces);
    for (const [name, text] of Object.entries(files?.() ?? {})) {
        fs.mkdirSync(path.dirname(path.join(dataDir, name)), { recursive: true });
        fs.writeFileSync(path.join(dataDir, name), text);
    }
    return dataDir;
}
