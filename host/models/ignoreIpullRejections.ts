import path from "node:path";

let installed = false;

/**
 * node-llama-cpp's downloader (ipull 3.9) leaves promises without a rejection handler: the
 * `promise.then(...)` bookkeeping of each parallel slice (base-download-program.js) and of each
 * write (download-engine-file.js), and the retry loop of a slice that keeps running after its
 * download was closed. When such a slice fails (a 4xx, a body of the wrong length, its retries
 * used up), Node would end the host process. This hook drops those rejections: the download they
 * belonged to has already failed, or was stopped, and says so in its record. Any other rejection
 * is raised as Node would when this is the only hook, and left to the others when there are more.
 */
export function ignoreIpullRejections(): void {
    if (installed) {
        return;
    }
    installed = true;
    process.on("unhandledRejection", (reason) => {
        if (isIpullError(reason)) {
            return;
        }
        if (process.listenerCount("unhandledRejection") === 1) {
            throw reason;
        }
    });
}

const ipullFrame = `${path.sep}ipull${path.sep}`;

function isIpullError(reason: unknown): boolean {
    return reason instanceof Error && (reason.stack ?? "").includes(ipullFrame);
}
