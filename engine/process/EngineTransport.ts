import type { EngineEvent } from "../../contract/engineProtocol.js";

/** The engine process's one line to its host. Messages in are untrusted `unknown`s; out go typed events. */
export interface EngineTransport {
    readonly kind: "fork" | "utilityProcess";
    onMessage(listener: (message: unknown) => void): void;
    /** Resolves once the event is handed to the channel; never rejects (a dead channel ends the process anyway). */
    send(event: EngineEvent): Promise<void>;
    /** Called once when the host is gone: the engine must not outlive it. */
    onHostGone(listener: () => void): void;
}

/** What Electron's utilityProcess puts on `process`, duck-typed so that engine/ never imports electron. */
interface ParentPort {
    on(event: "message", listener: (event: { data: unknown }) => void): void;
    postMessage(message: unknown): void;
}

/** How often a utility process checks that its parent is still there. */
const PARENT_CHECK_INTERVAL_MS = 1_000;

/**
 * The transport this process was started with: Electron's `process.parentPort` in a
 * utilityProcess, else the IPC channel of `child_process.fork`; undefined when started by hand.
 */
export function connectToHost(): EngineTransport | undefined {
    const parentPort = (process as { parentPort?: ParentPort }).parentPort;
    if (parentPort !== undefined) {
        return parentPortTransport(parentPort);
    }
    if (typeof process.send === "function" && process.connected) {
        return forkTransport();
    }
    return undefined;
}

function forkTransport(): EngineTransport {
    return {
        kind: "fork",
        onMessage(listener) {
            process.on("message", (message: unknown) => listener(message));
        },
        send(event) {
            return new Promise((resolve) => {
                if (!process.connected || process.send === undefined) {
                    resolve();
                    return;
                }
                // The callback takes send's error: without it a send on a closing channel is an
                // 'error' event on process, which nothing handles, and would crash the engine.
                try {
                    process.send(event, undefined, {}, () => resolve());
                } catch {
                    resolve();
                }
            });
        },
        onHostGone(listener) {
            // The IPC channel closes when the host exits, crashes or disconnects.
            process.once("disconnect", listener);
        }
    };
}

function parentPortTransport(parentPort: ParentPort): EngineTransport {
    return {
        kind: "utilityProcess",
        onMessage(listener) {
            parentPort.on("message", (event) => listener(event?.data));
        },
        send(event) {
            try {
                parentPort.postMessage(event);
            } catch {
                // a closed port: the host is gone, and onHostGone ends the process
            }
            return Promise.resolve();
        },
        onHostGone(listener) {
            // A parentPort has no disconnect event. Electron ends utility processes with the app;
            // this catches the rest (the main process killed outright): the child is re-parented.
            const parentPid = process.ppid;
            const timer = setInterval(() => {
                if (process.ppid !== parentPid) {
                    clearInterval(timer);
                    listener();
                }
            }, PARENT_CHECK_INTERVAL_MS);
            timer.unref();
        }
    };
}
