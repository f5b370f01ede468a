import { useEffect } from "react";
import type { KvaultRpc } from "../rpc/KvaultRpc.js";
import { pollWhileVisible } from "../rpc/pollWhileVisible.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useResourceStore } from "./resourceStore.js";

/** Between two resourceUse calls, ms: twice a second shows an answer's rate while it runs (the engine counts in tenths of a second). */
export const RESOURCE_POLL_MS = 500;

/** Keeps resourceStore equal to the engine's resourceUse, polled one call at a time while the page is visible. */
export function useResourceMirror(rpc: KvaultRpc): void {
    useEffect(() => {
        const loop = pollWhileVisible(
            rpc,
            () => RESOURCE_POLL_MS,
            async () => {
                try {
                    const use = await rpc.call("resourceUse", {});
                    if (!loop.disposed) {
                        useResourceStore.setState({ use, error: undefined });
                    }
                } catch (error) {
                    if (!loop.disposed) {
                        useResourceStore.setState({ error: toRpcError(error).message });
                    }
                }
            }
        );
        void loop.poll();
        return () => loop.dispose();
    }, [rpc]);
}
