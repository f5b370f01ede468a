// The engine process (docs/ARCHITECTURE.md, Processes): started by a host through Electron's
// utilityProcess or child_process.fork, it loads the model and serves the protocol of
// contract/engineProtocol.ts until the host says shutdown or goes away. A native crash here costs
// the host one restart, never its windows or its chat history.
import { auditIntervalFromEnvironment } from "../audit/PeriodicAudit.js";
import { EngineService } from "../service/EngineService.js";
import { EngineCommandServer } from "./EngineCommandServer.js";
import { connectToHost } from "./EngineTransport.js";
import { batchEvents } from "./batchEvents.js";
import { readEngineProcessConfig } from "./readEngineProcessConfig.js";
import { toErrorPayload } from "./toErrorPayload.js";
import { withDeadline } from "../core/withDeadline.js";

/** Messages held while the model loads; a host sends nothing before `ready`, so this only bounds a misbehaving one. */
const MAX_EARLY_MESSAGES = 1_000;
/** How long disposal may take once the host is gone, before the process exits regardless. */
const HOST_GONE_DISPOSE_MS = 5_000;

function log(line: string): void {
    process.stderr.write(`[kvault engine ${process.pid}] ${line}\n`);
}

async function main(): Promise<void> {
    const connection = connectToHost();
    if (connection === undefined) {
        log("no host: start the engine through the app or the headless server (utilityProcess or child_process.fork).");
        process.exit(2);
    }
    const transport = batchEvents(connection);

    let server: EngineCommandServer | undefined = undefined; // set once the engine is ready
    const early: unknown[] = [];
    transport.onMessage((message) => {
        if (server !== undefined) {
            server.handle(message);
        } else if (early.length < MAX_EARLY_MESSAGES) {
            early.push(message);
        } else {
            log(`dropped a message that arrived before the engine was ready (${MAX_EARLY_MESSAGES} already held).`);
        }
    });
    transport.onHostGone(() => {
        // No orphan engines: without a host nobody can reach this process.
        if (server === undefined) {
            process.exit(0);
        }
        void withDeadline(server.stop(), HOST_GONE_DISPOSE_MS).then(() => process.exit(0));
    });

    const read = readEngineProcessConfig(process.env, process.argv);
    if (!read.ok) {
        await transport.send({ type: "startFailed", error: { code: "invalid_engine_config", message: read.message } });
        process.exit(1);
    }
    let service: EngineService;
    try {
        const audit = auditIntervalFromEnvironment(process.env); // I1–I7 every second, results in every snapshot
        if (audit.problem !== undefined) {
            log(audit.problem);
        }
        service = await EngineService.start(read.config, { auditIntervalMs: audit.intervalMs, log });
    } catch (error) {
        // node-llama-cpp's own errors (a missing or corrupt file, no memory) are not KvaultErrors.
        const payload = toErrorPayload(error, (detail) => ({
            code: "engine_start_failed",
            message: `Loading the model failed (${detail}). Check that the file exists and is a GGUF model this version of llama.cpp reads, then try again.`
        }));
        log(`could not start: ${payload.message}`);
        await transport.send({ type: "startFailed", error: payload });
        process.exit(1);
    }

    const started = new EngineCommandServer(service, transport, {
        log,
        onShutdown: () =>
            void started.stop().then(
                () => process.exit(0),
                () => process.exit(1)
            )
    });
    await transport.send({ type: "ready", info: service.info() });
    server = started;
    for (const message of early.splice(0)) {
        started.handle(message);
    }
}

main().catch((error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
});
