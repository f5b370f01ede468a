// The gateway's relay writes with backpressure: while the client has not taken what was written,
// the relay waits instead of reading more of the backend's stream, so a client that does not read
// holds the backend back (its TCP window closes) rather than filling the host's memory.
import type { ServerResponse } from "node:http";

/**
 * Writes `text`; resolves at once while the response's buffer is under its high-water mark, else
 * once it has drained. Rejects with `signal`'s reason when it aborts first (the client left, the
 * request's deadline passed).
 */
export function writeOrWait(response: ServerResponse, text: string, signal: AbortSignal): Promise<void> {
    if (response.write(text)) {
        return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
        const settle = (error?: unknown): void => {
            response.off("drain", onDrain);
            signal.removeEventListener("abort", onAbort);
            if (error === undefined) {
                resolve();
            } else {
                reject(error);
            }
        };
        const onDrain = (): void => settle();
        const onAbort = (): void => settle(signal.reason ?? new Error("aborted"));
        if (signal.aborted) {
            onAbort();
            return;
        }
        response.on("drain", onDrain);
        signal.addEventListener("abort", onAbort, { once: true });
    });
}
