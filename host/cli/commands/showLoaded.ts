import { CliError } from "../CliError.js";
import { exitCodes, type ExitCode } from "../exitCodes.js";
import { formatSize } from "../formatSize.js";
import { formatTable } from "../formatTable.js";
import type { KvaultClient } from "../KvaultClient.js";
import { readMetrics, type MetricSample } from "./readMetrics.js";

/** Ollama's /api/ps entry as the command reads it. */
interface LoadedModel {
    readonly name: string;
    readonly size: number;
    readonly size_vram: number;
    readonly expires_at: string;
}

/** An `expires_at` at or beyond this year means "until the server stops" (Ollama prints Forever). */
const FOREVER_YEAR = 9999;

/**
 * `kvault ps`: what is loaded, from Ollama's /api/ps (name, size, where it runs, until when), and
 * the KV memory from /metrics: pages of the host pool by state, the window and the capacities
 * measured, requests waiting. /metrics takes the server's own key only; with another key the
 * memory part says so and the models are still listed.
 */
export async function showLoaded(
    client: KvaultClient,
    options: { readonly json: boolean; readonly output: NodeJS.WritableStream; readonly now?: number }
): Promise<ExitCode> {
    const { models } = await client.getJson<{ models: LoadedModel[] }>("/api/ps");
    let samples: MetricSample[] | undefined;
    let metricsRefused: string | undefined;
    try {
        samples = readMetrics(await client.getText("/metrics"));
    } catch (error) {
        if (!(error instanceof CliError) || error.exitCode !== exitCodes.refused) {
            throw error;
        }
        metricsRefused = "KV memory: /metrics takes the server's own key; give it with --api-key to see pages and capacities.";
    }
    const memory = samples === undefined ? undefined : kvMemory(samples);
    if (options.json) {
        options.output.write(`${JSON.stringify({ models, ...(memory === undefined ? {} : { memory }) }, null, 2)}\n`);
        return exitCodes.ok;
    }
    const now = options.now ?? Date.now();
    const rows = models.map((model) => [model.name, formatSize(model.size), processor(model), until(model.expires_at, now)]);
    options.output.write(`${formatTable([["NAME", "SIZE", "PROCESSOR", "UNTIL"], ...rows])}\n`);
    if (memory !== undefined) {
        const pages = Object.entries(memory.pages)
            .map(([state, count]) => `${count.toLocaleString("en-US")} ${state}`)
            .join(", ");
        const total = Object.values(memory.pages).reduce((sum, count) => sum + count, 0);
        const bounds = Object.entries(memory.contextTokens)
            .map(([bound, tokens]) => `${bound} ${tokens.toLocaleString("en-US")}`)
            .join(", ");
        options.output.write(`\nKV pages: ${total.toLocaleString("en-US")} in the host pool (${pages})\n`);
        options.output.write(`Context tokens: ${bounds}\n`);
        options.output.write(`Requests waiting for a decode sequence: ${memory.queued}\n`);
    } else if (metricsRefused !== undefined) {
        options.output.write(`\n${metricsRefused}\n`);
    }
    return exitCodes.ok;
}

function kvMemory(samples: readonly MetricSample[]): {
    pages: Record<string, number>;
    contextTokens: Record<string, number>;
    queued: number;
} {
    const pages: Record<string, number> = {};
    const contextTokens: Record<string, number> = {};
    let queued = 0;
    for (const sample of samples) {
        if (sample.name === "kvault_pages" && sample.labels.state !== undefined) {
            pages[sample.labels.state] = (pages[sample.labels.state] ?? 0) + sample.value;
        } else if (sample.name === "kvault_context_limit_tokens" && sample.labels.bound !== undefined) {
            contextTokens[sample.labels.bound] = sample.value;
        } else if (sample.name === "kvault_queue_length") {
            queued += sample.value;
        }
    }
    return { pages, contextTokens, queued };
}

/** As `ollama ps` says it: "100% CPU", "100% GPU", or the split. */
function processor(model: LoadedModel): string {
    if (model.size <= 0 || model.size_vram <= 0) {
        return "100% CPU";
    }
    const onGpu = Math.round((model.size_vram / model.size) * 100);
    return onGpu >= 100 ? "100% GPU" : `${100 - onGpu}%/${onGpu}% CPU/GPU`;
}

function until(expiresAt: string, now: number): string {
    const when = Date.parse(expiresAt);
    if (!Number.isFinite(when) || new Date(when).getUTCFullYear() >= FOREVER_YEAR) {
        return "Forever";
    }
    const seconds = Math.max(0, Math.round((when - now) / 1000));
    return seconds < 120 ? `${seconds} seconds from now` : `${Math.round(seconds / 60)} minutes from now`;
}
