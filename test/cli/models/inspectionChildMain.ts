// An inspection process for inspectionDeadlines.test.ts: the real serveInspection, with a start
// that outlasts the read deadline, a read that never ends, or a start that never ends, as
// KVAULT_TEST_INSPECTION says.
import { setTimeout as sleep } from "node:timers/promises";

/** Longer than the test's read deadline, far shorter than the start-up bound. */
const SLOW_START_MS = 3_000;

const mode = process.env.KVAULT_TEST_INSPECTION;
// A bounded keep-alive: the process is killed long before it ends.
const keepAlive = (): NodeJS.Timeout => setInterval(() => undefined, 1_000);

if (mode === "neverStarts") {
    keepAlive();
} else {
    if (mode === "slowStart") {
        await sleep(SLOW_START_MS);
    }
    const { serveInspection } = await import("../../../host/models/serveInspection.js");
    void serveInspection(async (request) => {
        if (mode === "hangsReading") {
            keepAlive();
            await new Promise<never>(() => undefined);
        }
        return { path: request.path, architecture: "llama", numLayers: 1 };
    });
}
