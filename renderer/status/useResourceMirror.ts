import { useEffect } from "react";
import type { KvaultRpc } from "../rpc/KvaultRpc.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useResourceStore } from "./resourceStore.js";

/** Between two resourceUse calls, ms: twice a second shows an answer's rate while it runs (the engine counts in tenths of a second). */
export const RESOURCE_POLL_MS = 500;

/** Keeps resourceStore equal to the engine's resourceUse, polled one call at a time while the page is visible. */
export function useResourceMirror(rpc: KvaultRpc): void {
    useEffect(() => {
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
                    const use = await rpc.call("resourceUse", {});
                    if (!disposed) {
                        useResourceStore.setState({ use, error: undefined });
                    }
                } catch (error) {
                    if (!disposed) {
                        useResourceStore.setState({ error: toRpcError(error).message });
                    }
                } finally {
                    inFlight = false;
                }
            }
            if (!disposed && document.visibilityState === "visible") {
                timer = setTimeout(() => void poll(), RESOURCE_POLL_MS);
            }
        };
        const unsubscribe = rpc.onStatus((connection) => {
            if (connection.kind === "open") {
                void poll();
            }
        });
        const onVisibility = (): void => void poll();
        document.addEventListener("visibilitychange", onVisibility);
        void poll();
        return () => {
            disposed = true;
            clearTimeout(timer);
            unsubscribe();
            document.removeEventListener("visibilitychange", onVisibility);
        };
    }, [rpc]);
}
