// Runs one download in a child process (downloadProcessMain.ts) with a capped heap, so a test can
// watch a download that would end the host end only that child, and assert the host survives.
import { fork } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ModelDownload } from "../../contract/models.js";

export interface ChildDownload {
    /** Undefined when the child ended without posting it. */
    readonly record: ModelDownload | undefined;
    /** The child's peak resident memory (bytes); undefined when it posted nothing. */
    readonly maxRssBytes: number | undefined;
    readonly exitCode: number | null;
    readonly signal: NodeJS.Signals | null;
    /** The end of its stderr: V8's last words when it died. */
    readonly stderr: string;
}

/** How much of the child's stderr is kept. */
const STDERR_CHARS = 4_000;

/** Downloads `source` into `modelsDirectory` in a child whose V8 heap is `maxHeapMb` MiB; resolves once it exited. */
export function downloadInChild(
    source: string,
    modelsDirectory: string,
    options: { readonly maxHeapMb: number; readonly keepFreeBytes?: number; readonly env?: Readonly<Record<string, string>> }
): Promise<ChildDownload> {
    const entry = fileURLToPath(new URL("./downloadProcessMain.ts", import.meta.url));
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
    const args = [source, modelsDirectory, ...(options.keepFreeBytes === undefined ? [] : [String(options.keepFreeBytes)])];
    const child = fork(entry, args, {
        execArgv: [`--max-old-space-size=${options.maxHeapMb}`, "--import", tsx],
        serialization: "json",
        env: { ...process.env, ...options.env },
        stdio: ["ignore", "ignore", "pipe", "ipc"]
    });
    let stderr = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => void (stderr = (stderr + chunk).slice(-STDERR_CHARS)));
    let posted: { record: ModelDownload; maxRssBytes: number } | undefined;
    child.on("message", (message) => void (posted = message as typeof posted));
    return new Promise((resolve) => {
        child.on("close", (exitCode, signal) =>
            resolve({ record: posted?.record, maxRssBytes: posted?.maxRssBytes, exitCode, signal, stderr })
        );
    });
}
