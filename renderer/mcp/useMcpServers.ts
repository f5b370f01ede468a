import { useCallback, useEffect, useState } from "react";
import type { McpServersView } from "../../contract/mcp.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";

export type McpServersLoad =
    | { readonly kind: "loading" }
    | { readonly kind: "ready"; readonly view: McpServersView }
    | { readonly kind: "failed"; readonly message: string };

/** The host's MCP servers (listMcpServers), read once the connection is open and again on `reload`. */
export function useMcpServers(): { readonly loaded: McpServersLoad; readonly reload: () => void } {
    const { rpc } = useAppServices();
    const [loaded, setLoaded] = useState<McpServersLoad>({ kind: "loading" });
    const [generation, setGeneration] = useState(0);
    const reload = useCallback(() => setGeneration((value) => value + 1), []);

    useEffect(() => {
        let isCurrent = true;
        const load = (): void => {
            rpc.call("listMcpServers", {}).then(
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

    return { loaded, reload };
}
