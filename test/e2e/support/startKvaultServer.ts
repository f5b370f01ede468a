import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/**
 * The server as `npm run serve` runs it: built JavaScript (out/main/serve.js, and the engine process
 * it forks), run by node alone. globalSetup builds it from the sources before any test starts;
 * through tsx a start took about twice as long (docs/TESTING.md).
 */
const builtServer = path.join(repositoryRoot, "out", "main", "serve.js");

/** The small engine every browser test runs: a 512-token window, two decode sequences, 16-token pages (96 pages). */
/** The browser's one-time login link, as serve prints it on stdout (host/headless/serve.ts). */
const LOGIN_LINE = /^Kvault login link \(works once\): (\S+)$/gm;

/**
 * The small engine every browser test runs: a 512-token window, two decode sequences, 16-token
 * pages, on the CPU whatever GPU drivers the machine has (a test of a GPU names its backend).
 */
export const e2eServeArgs = ["--context", "512", "--decode-sequences", "2", "--page-tokens", "16", "--gpu", "off"] as const;

export interface KvaultServer {
    readonly url: string;
    /** The key it was started with (--api-key): API clients' way in, never the browser's. */
    readonly apiKey: string;
    /**
     * A login link the server printed on stdout that no one used yet: the newest one, or the next
     * one once it has been printed (each link works once, and the server prints a new one when one
     * is used). Throws when none comes within 10 s.
     */
    loginUrl(): Promise<string>;
    readonly child: ChildProcess;
    /** What the server wrote on stderr so far, for failure messages. */
    stderr(): string;
    /** The engine process the server forked, found by its parent pid and entry point. */
    enginePid(): number | undefined;
    /** Where it keeps models and chats (--data-dir). */
    readonly dataDir: string;
    /** Stops the server (SIGTERM, then SIGKILL after 15 s) and removes its data directory unless the caller gave it. Idempotent. */
    stop(): Promise<void>;
}

/**
 * Starts `npm run serve`'s server (as built, see `builtServer`) on a free port, with a fresh data
 * directory of its own, or with `options.dataDir` (kept when it stops: the caller's to remove).
 * `options.extraArgs` are more `npm run serve` options, after e2eServeArgs; one of e2eServeArgs'
 * options given there too (`--context 2048`) takes its place, since serve refuses an option twice.
 */
export async function startKvaultServer(
    options: {
        readonly dataDir?: string;
        readonly extraArgs?: readonly string[];
        /** More environment variables for the server (say, KVAULT_HUGGINGFACE_URL). */
        readonly env?: Readonly<Record<string, string>>;
        /** false: without e2eServeArgs, so the engine settings come from the data directory's settings.json (the settings screen's test). */
        readonly engineArgs?: boolean;
    } = {}
): Promise<KvaultServer> {
    const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "kvault-e2e-"));
    const apiKey = `e2e-${crypto.randomBytes(12).toString("hex")}`;
    const child = spawn(
        process.execPath,
        [
            builtServer,
            "--port",
            "0",
            "--data-dir",
            dataDir,
            "--api-key",
            apiKey,
            ...(options.engineArgs === false ? [] : withoutOptions(e2eServeArgs, options.extraArgs ?? [])),
            ...(options.extraArgs ?? [])
        ],
        {
            cwd: repositoryRoot,
            stdio: ["ignore", "pipe", "pipe"],
            env: { ...process.env, ...options.env }
        }
    );
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => void (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

    let stopped: Promise<void> | undefined;
    const stop = (): Promise<void> =>
        (stopped ??= (async () => {
            if (child.exitCode === null && child.signalCode === null) {
                child.kill("SIGTERM");
                const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
                await exited;
                clearTimeout(timer);
            }
            if (options.dataDir === undefined) {
                fs.rmSync(dataDir, { recursive: true, force: true });
            }
        })());

    try {
        const url = await new Promise<string>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`The server did not start in 90 s. stderr:\n${stderr}`)), 90_000);
            child.stdout!.on("data", () => {
                const match = /^Kvault listening on (\S+)$/m.exec(stdout);
                if (match !== null) {
                    clearTimeout(timer);
                    resolve(match[1]!);
                }
            });
            void exited.then(() => {
                clearTimeout(timer);
                reject(new Error(`The server exited before listening (${child.exitCode ?? child.signalCode}). stderr:\n${stderr}`));
            });
        });
        const handedOut = new Set<string>();
        const loginUrl = async (): Promise<string> => {
            for (let attempt = 0; attempt < 200; attempt++) {
                const newest = [...stdout.matchAll(LOGIN_LINE)].at(-1)?.[1];
                if (newest !== undefined && !handedOut.has(newest)) {
                    handedOut.add(newest);
                    return newest;
                }
                await new Promise((resolve) => setTimeout(resolve, 50));
            }
            throw new Error(`The server printed no unused login link in 10 s. stdout:\n${stdout}`);
        };
        return { url, apiKey, loginUrl, child, dataDir, stderr: () => stderr, enginePid: () => findEnginePid(child.pid), stop };
    } catch (error) {
        await stop();
        throw error;
    }
}

/** Linux: the child of `parentPid` whose command line runs the engine process's entry. */
function findEnginePid(parentPid: number | undefined): number | undefined {
    if (parentPid === undefined) {
        return undefined;
    }
    for (const entry of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(entry)) {
            continue;
        }
        try {
            const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
            const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
            if (parent === parentPid && fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("engineProcess")) {
                return Number(entry);
            }
        } catch {
            // the process ended while we looked
        }
    }
    return undefined;
}

/** `args` (pairs of an option and its value) less the options that `overrides` gives. */
function withoutOptions(args: readonly string[], overrides: readonly string[]): string[] {
    const kept: string[] = [];
    for (let index = 0; index < args.length; index += 2) {
        if (!overrides.includes(args[index]!)) {
            kept.push(args[index]!, args[index + 1]!);
        }
    }
    return kept;
}
