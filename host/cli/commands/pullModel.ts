import path from "node:path";
import type { ModelDownload } from "../../../contract/models.js";
import { catalogueEntries } from "../../models/catalogue/catalogueEntries.js";
import { CliError } from "../CliError.js";
import { exitCodes, type ExitCode } from "../exitCodes.js";
import { formatProgress } from "../formatProgress.js";
import type { KvaultClient } from "../KvaultClient.js";
import { openKvaultRpc } from "../openKvaultRpc.js";

/** How often the download's record is asked for. */
const POLL_MS = 250;
/** The quantization `kvault pull CATALOGUE-ID` takes when none is given, as the catalogue's Download button does. */
const DEFAULT_QUANT = "Q4_K_M";

export interface PullOptions {
    /** A catalogue id (`qwen3-0.6b`, `qwen3-0.6b:Q8_0`), an `hf:owner/repo:quant` reference or an http(s) URL. */
    readonly source: string;
    readonly output: NodeJS.WritableStream & { isTTY?: boolean };
    /** Ends the wait (Ctrl-C): the download goes on in Kvault, and the same pull shows it again. */
    readonly signal?: AbortSignal;
}

/**
 * `kvault pull`: the running Kvault downloads the model (the catalogue's and the app's downloader:
 * resumable, checked, inspected, added to the library) while the command draws its progress. A
 * pull of a source that stopped resumes it from the bytes on disk.
 */
export async function pullModel(client: KvaultClient, options: PullOptions): Promise<ExitCode> {
    const source = downloadSource(options.source);
    const rpc = await openKvaultRpc(client);
    try {
        let download = await rpc.call("startDownload", { source });
        let lastLine = "";
        // the file's own name once the server knows it, as `ollama pull` names the layer it fetches
        const nameOf = (record: ModelDownload): string => (record.path === "" ? source : path.basename(record.path));
        const draw = (record: ModelDownload): void => {
            const line = formatProgress({
                name: nameOf(record),
                downloadedBytes: record.downloadedBytes,
                totalBytes: record.totalBytes,
                bytesPerSecond: record.bytesPerSecond > 0 ? record.bytesPerSecond : undefined
            });
            if (options.output.isTTY === true) {
                options.output.write(`\r${line}\x1b[K`);
            } else if (line !== lastLine) {
                options.output.write(`${line}\n`);
            }
            lastLine = line;
        };
        while (download.state === "downloading") {
            draw(download);
            if (options.signal?.aborted === true) {
                options.output.write(
                    `\nStopped waiting; Kvault goes on downloading ${nameOf(download)}. \`kvault pull ${options.source}\` shows it again.\n`
                );
                return exitCodes.interrupted;
            }
            await new Promise((resolve) => setTimeout(resolve, POLL_MS));
            const id = download.id;
            download = (await rpc.call("listDownloads", {})).find((record) => record.id === id) ?? download;
        }
        draw(download);
        options.output.write(options.output.isTTY === true ? "\n" : "");
        if (download.notice !== undefined) {
            options.output.write(`${download.notice}\n`);
        }
        if (download.state !== "done") {
            const resume = download.resumable ? ` The partial file is kept: \`kvault pull ${options.source}\` resumes it.` : "";
            throw new CliError(
                `The download of ${nameOf(download)} ${download.state}: ${download.error?.message ?? "Kvault gave no reason"}.${resume}`,
                download.error?.code ?? "download_failed"
            );
        }
        options.output.write(`Downloaded ${download.path}\n`);
        return exitCodes.ok;
    } finally {
        rpc.dispose();
    }
}

/** A catalogue id (with `:QUANT` or not) as the `hf:` reference of its file; anything else as given, for the server to check. */
export function downloadSource(given: string): string {
    const [id, quant = DEFAULT_QUANT] = given.split(":");
    const entry = catalogueEntries.find((candidate) => candidate.id === id);
    if (entry === undefined) {
        return given;
    }
    const file = entry.files.find((candidate) => candidate.quant.toLowerCase() === quant!.toLowerCase());
    if (file === undefined) {
        throw new CliError(
            `The catalogue's ${entry.id} comes as ${entry.files.map((candidate) => candidate.quant).join(", ")}, not ${quant}.`,
            "quant_unknown",
            exitCodes.usage
        );
    }
    return `hf:${entry.repo}/${file.fileName}`;
}
