import type { McpServersView } from "../../contract/mcp.js";
import { useRpcWhenOpen, type RpcLoad } from "../rpc/useRpcWhenOpen.js";

export type McpServersLoad = RpcLoad<McpServersView>;

/** The host's MCP servers (listMcpServers), read once the connection is open and again on `reload`. */
export function useMcpServers(): { readonly loaded: McpServersLoad; readonly reload: () => void } {
    const { loaded, reload } = useRpcWhenOpen((rpc) => rpc.call("listMcpServers", {}));
    return { loaded, reload };
}
