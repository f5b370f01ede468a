// The inspection process's side of inspectModelInChild: read the request, run the inspection,
// post the facts or the typed refusal, exit; meanwhile a watchdog stops the process, saying so,
// before its V8 heap or its resident memory passes the limits. Model files are untrusted: whatever
// one does to this process, its host only sees an answer, or an exit it turns into model_unreadable.
import v8 from "node:v8";
import { INSPECT_REQUEST_ENV, type InspectionAnswer, type InspectionRequest } from "./inspectionProcess.js";

/** What Electron's utilityProcess puts on `process`. */
interface ParentPort {
    postMessage(message: unknown): void;
}

/** How often the watchdog looks; an allocation loop that never yields meets V8's own heap limit instead. */
const WATCHDOG_INTERVAL_MS = 50;
/** The share of V8's heap limit at which the watchdog stops the process, before V8 aborts it. */
const HEAP_SHARE = 0.9;

function post(answer: InspectionAnswer): Promise<void> {
    const parentPort = (process as { parentPort?: ParentPort }).parentPort;
    if (parentPort !== undefined) {
        parentPort.postMessage(answer);
        return Promise.resolve();
    }
    return new Promise((resolve) => {
        if (process.send === undefined || !process.connected) {
            resolve();
            return;
        }
        process.send(answer, undefined, {}, () => resolve());
    });
}

function readRequest(): InspectionRequest | undefined {
    try {
        const request = JSON.parse(process.env[INSPECT_REQUEST_ENV] ?? "") as Partial<InspectionRequest>;
        const positive = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value > 0;
        if (
            typeof request.path === "string" &&
            positive(request.contextSize) &&
            positive(request.sequences) &&
            positive(request.maxRssBytes)
        ) {
            return request as InspectionRequest;
        }
    } catch {
        // reported below
    }
    return undefined;
}

function watch(maxRssBytes: number): void {
    const heapLimit = v8.getHeapStatistics().heap_size_limit;
    const timer = setInterval(() => {
        const heap = v8.getHeapStatistics().used_heap_size;
        const rss = process.memoryUsage.rss();
        const over: InspectionAnswer | undefined =
            heap > heapLimit * HEAP_SHARE
                ? { type: "overMemory", what: "heap", bytes: heap, limitBytes: heapLimit }
                : rss > maxRssBytes
                  ? { type: "overMemory", what: "rss", bytes: rss, limitBytes: maxRssBytes }
                  : undefined;
        if (over !== undefined) {
            clearInterval(timer);
            void post(over).finally(() => process.exit(3));
        }
    }, WATCHDOG_INTERVAL_MS);
    timer.unref();
}

/** Runs `inspect` on this process's request, answers the host, and exits. */
export async function serveInspection(inspect: (request: InspectionRequest) => Promise<unknown>): Promise<never> {
    const request = readRequest();
    if (request === undefined) {
        await post({ type: "refused", code: "invalid_request", message: `${INSPECT_REQUEST_ENV} does not hold an inspection request.` });
        process.exit(2);
    }
    watch(request.maxRssBytes);
    // A forked child whose host is gone has nobody to answer.
    process.once("disconnect", () => process.exit(0));
    // Loading this process's code (compiling it, from sources) is start-up, not reading: the read deadline starts here.
    await post({ type: "ready" });
    try {
        await post({ type: "facts", facts: await inspect(request) });
    } catch (error) {
        const code = (error as { code?: unknown }).code;
        await post({ type: "refused", code: typeof code === "string" ? code : "internal", message: (error as Error).message });
    }
    process.exit(0);
}
