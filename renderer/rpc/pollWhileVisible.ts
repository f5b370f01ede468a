import type { KvaultRpc } from "./KvaultRpc.js";

/** A poll loop started by pollWhileVisible. */
export interface VisiblePoll {
    /** Reads now (unless a read is in flight), then on schedule; a no-op once disposed. */
    poll(): Promise<void>;
    /** Whether dispose has run: a read that ends after it must not write to a store. */
    readonly disposed: boolean;
    /** Stops the loop and its listeners; idempotent. */
    dispose(): void;
}

/**
 * Calls `read` one at a time (never overlapping), every `intervalMs()` while the page is visible
 * and the connection open; again at once when the connection opens or the page becomes visible.
 * `read` handles its own errors. The engine mirror and the status bar share this loop.
 */
export function pollWhileVisible(rpc: KvaultRpc, intervalMs: () => number, read: () => Promise<void>): VisiblePoll {
    let disposed = false;
    let inFlight = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async (): Promise<void> => {
        clearTimeout(timer);
        timer = undefined;
        if (disposed || inFlight) {
            return;
        }
        if (rpc.status.kind === "open" && document.visibilityState === "visible") {
            inFlight = true;
            try {
                await read();
            } finally {
                inFlight = false;
            }
        }
        if (!disposed && document.visibilityState === "visible") {
            timer = setTimeout(() => void poll(), intervalMs());
        }
    };
    const unsubscribe = rpc.onStatus((connection) => {
        if (connection.kind === "open") {
            void poll();
        }
    });
    const onVisibility = (): void => void poll();
    document.addEventListener("visibilitychange", onVisibility);
    return {
        poll,
        get disposed() {
            return disposed;
        },
        dispose: () => {
            if (disposed) {
                return;
            }
            disposed = true;
            clearTimeout(timer);
            unsubscribe();
            document.removeEventListener("visibilitychange", onVisibility);
        }
    };
}
