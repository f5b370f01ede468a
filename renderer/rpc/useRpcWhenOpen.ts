import { useCallback, useEffect, useRef, useState } from "react";
import { useAppServices } from "../AppServices.js";
import type { KvaultRpc } from "./KvaultRpc.js";
import { toRpcError } from "./RpcError.js";

/** What a read from the host shows: not yet read, its value, or why it failed (the RpcError's message). */
export type RpcLoad<T> =
    | { readonly kind: "loading" }
    | { readonly kind: "ready"; readonly view: T }
    | { readonly kind: "failed"; readonly message: string };

export interface RpcWhenOpen<T> {
    readonly loaded: RpcLoad<T>;
    /** Reads again (after a change the host made that this read shows). */
    readonly reload: () => void;
    /** Shows a value the host answered another call with (a save's new view), without reading again. */
    readonly show: (view: T) => void;
}

/**
 * `read` run once the RPC connection is open, and again each time it opens: the headless page's
 * socket may not be open yet at mount, and reopens after the server restarts. An answer that
 * arrives after unmount or a newer read is dropped.
 */
export function useRpcWhenOpen<T>(read: (rpc: KvaultRpc) => Promise<T>): RpcWhenOpen<T> {
    const { rpc } = useAppServices();
    const [loaded, setLoaded] = useState<RpcLoad<T>>({ kind: "loading" });
    const [generation, setGeneration] = useState(0);
    const reload = useCallback(() => setGeneration((value) => value + 1), []);
    const show = useCallback((view: T) => setLoaded({ kind: "ready", view }), []);
    // The latest `read`, so that a caller's inline function does not start a read on every render.
    const readRef = useRef(read);
    readRef.current = read;

    useEffect(() => {
        let isCurrent = true;
        const load = (): void => {
            readRef.current(rpc).then(
                (view) => isCurrent && setLoaded({ kind: "ready", view }),
                (failure: unknown) => isCurrent && setLoaded({ kind: "failed", message: toRpcError(failure).message })
            );
        };
        const unsubscribe = rpc.onStatus((status) => {
            if (status.kind === "open") {
                load();
            }
        });
        if (rpc.status.kind === "open") {
            load();
        }
        return () => {
            isCurrent = false;
            unsubscribe();
        };
    }, [rpc, generation]);

    return { loaded, reload, show };
}
