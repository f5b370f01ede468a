// `npm run bench -- memoryview`: the Memory view in Chromium with a pool of 20,000 pages whose
// pages change while the snapshot comes ten times a second (two API clients handing prompts off
// through the pool without a pause), and Chromium's own performance trace of it: the renderer's
// animation frames (from the task that asked for a frame to its presentation: script, style, layout,
// paint), median and p95, and the frames drawn and dropped a second.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { openKvault } from "../e2e/support/openKvault.js";
import { seedChats } from "../e2e/support/seedChats.js";
import { repositoryRoot, startKvaultServer } from "../e2e/support/startKvaultServer.js";
import type { Benchmark, BenchFigures } from "./benchUtils.js";

const NUM_POOL_PAGES = 20_000;
/** How long the trace records (ms). */
const TRACE_MS = 10_000;
/** A prompt over the 128 tokens decode evaluates in place: each request reserves, seals, verifies and frees pages. */
const PROMPT = Array.from({ length: 12 }, (_, index) => `page ${index} holds sixteen positions`).join(", ");

interface TraceEvent {
    readonly name: string;
    readonly ph: string;
    readonly dur?: number;
    readonly ts: number;
    readonly tid: number;
    readonly pid: number;
    readonly id?: string;
    readonly id2?: { readonly local?: string };
}

/**
 * Chromium's AnimationFrame spans (the trace's async begin/end pairs, one per frame the page
 * rendered): from the first task that asked for the frame to its presentation, what DevTools'
 * long-animation-frame track draws. Milliseconds.
 */
function animationFrameDurations(events: readonly TraceEvent[]): number[] {
    const begun = new Map<string, number>();
    const durations: number[] = [];
    for (const event of events) {
        if (event.name !== "AnimationFrame") {
            continue;
        }
        const key = `${event.pid}:${event.id ?? event.id2?.local ?? ""}`;
        if (event.ph === "b") {
            begun.set(key, event.ts);
        } else if (event.ph === "e" && begun.has(key)) {
            durations.push((event.ts - begun.get(key)!) / 1000);
            begun.delete(key);
        }
    }
    return durations;
}

function percentile(sorted: readonly number[], fraction: number): number {
    return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

export const memoryViewBench: Benchmark = {
    name: "memoryview",
    description: `the Memory view with ${NUM_POOL_PAGES.toLocaleString("en-US")} pool pages changing at 10 Hz: Chromium's animation frame times (median, p95)`,
    explicitOnly: true,
    async run(): Promise<BenchFigures> {
        execFileSync("npx", ["electron-vite", "build", "--logLevel", "warn"], { cwd: repositoryRoot, stdio: "inherit" });
        const dataDir = seedChats([{ id: "bench-a", name: "A", colour: 0, messages: [] }]);
        const server = await startKvaultServer({ dataDir, extraArgs: ["--pool-pages", String(NUM_POOL_PAGES)] });
        const app = await openKvault(await server.loginUrl(), { width: 1280, height: 900 });
        let loading = true;
        const listed = (await (
            await fetch(`${server.url}/v1/models`, { headers: { Authorization: `Bearer ${server.apiKey}` } })
        ).json()) as {
            data: { id: string }[];
        };
        const model = listed.data[0]!.id;
        const client = async (workspace: string): Promise<void> => {
            for (let index = 0; loading && index < 10_000; index++) {
                await fetch(`${server.url}/v1/chat/completions`, {
                    method: "POST",
                    headers: {
                        Authorization: `Bearer ${server.apiKey}`,
                        "Content-Type": "application/json",
                        "X-Kvault-Workspace": workspace
                    },
                    body: JSON.stringify({ model, messages: [{ role: "user", content: `${index} ${PROMPT}` }], max_tokens: 4 })
                }).then((response) => response.text());
            }
        };
        try {
            const { page } = app;
            await page.getByRole("tab", { name: "Memory", exact: true }).click();
            await page.getByRole("region", { name: "Memory timeline" }).waitFor({ timeout: 30_000 });
            const clients = [client("bench-1"), client("bench-2")];
            const cdp = await page.context().newCDPSession(page);
            const events: TraceEvent[] = [];
            cdp.on("Tracing.dataCollected", ({ value }) => void events.push(...(value as unknown as TraceEvent[])));
            const complete = new Promise<void>((resolve) => cdp.once("Tracing.tracingComplete", () => resolve()));
            await cdp.send("Tracing.start", {
                categories:
                    "devtools.timeline,disabled-by-default-devtools.timeline,disabled-by-default-devtools.timeline.frame,__metadata",
                transferMode: "ReportEvents"
            });
            const loadBefore = os.loadavg()[0]!;
            await new Promise((resolve) => setTimeout(resolve, TRACE_MS));
            await cdp.send("Tracing.end");
            await complete;
            loading = false;
            await Promise.allSettled(clients);

            const frames = animationFrameDurations(events).sort((a, b) => a - b);
            const count = (name: string): number => events.filter((event) => event.name === name).length;
            const figures = {
                numPoolPages: NUM_POOL_PAGES,
                traceMs: TRACE_MS,
                numFrames: frames.length,
                frameMedianMs: percentile(frames, 0.5),
                frameP95Ms: percentile(frames, 0.95),
                framesDrawnPerSecond: count("DrawFrame") / (TRACE_MS / 1000),
                framesDroppedPerSecond: count("DroppedFrame") / (TRACE_MS / 1000),
                // the machine's one-minute load average as the trace began and ended: on shared cores, the tail is the load's as much as the view's
                loadAverageFrom: loadBefore,
                loadAverageTo: os.loadavg()[0]!
            };
            console.table([figures]);
            return figures;
        } finally {
            loading = false;
            await app.close();
            await server.stop();
            fs.rmSync(dataDir, { recursive: true, force: true });
        }
    }
};
