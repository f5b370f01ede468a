import { RpcClient, WebSocketTransport } from "../../contract/rpcClient/index.js";
import { CliError } from "./CliError.js";
import { exitCodes } from "./exitCodes.js";
import type { KvaultClient } from "./KvaultClient.js";

/** How long connecting and each call may take. */
const RPC_TIMEOUT_MS = 30_000;

/**
 * The `kvault` command's connection to the host's RPC (the spec the app's settings screen uses),
 * over the headless server's `/rpc` WebSocket with the API key: what the HTTP API does not offer,
 * such as making a key for `kvault launch` or starting a download for `kvault pull`. The one RPC
 * client (contract/rpcClient/) over Node's WebSocket, which does not reconnect: its calls reject
 * with an RpcError, which the command reports as it does a CliError. Dispose it when done.
 */
export async function openKvaultRpc(client: KvaultClient): Promise<RpcClient> {
    const url = new URL("/rpc", client.baseUrl.replace(/^http/, "ws"));
    url.searchParams.set("key", client.options.apiKey ?? "");
    const rpc = new RpcClient(new WebSocketTransport(url.href, { reconnect: false }), { callTimeoutMs: RPC_TIMEOUT_MS });
    try {
        await rpc.whenOpen(RPC_TIMEOUT_MS);
        return rpc;
    } catch {
        rpc.dispose();
        throw await whyRefused(client);
    }
}

/**
 * Why the RPC connection did not open. A WebSocket (the browser's API, which Node's follows) does
 * not say the status its handshake was refused with, so the HTTP API is asked with the same key:
 * no answer, or a 401 there, says it; an answer there means the RPC alone refused the key, which
 * takes only the server's own key, not one made for a tool or a user.
 */
async function whyRefused(client: KvaultClient): Promise<CliError> {
    try {
        await client.fetch("/v1/models", { method: "GET", signal: AbortSignal.timeout(RPC_TIMEOUT_MS) });
    } catch (error) {
        if (error instanceof CliError) {
            return error;
        }
        throw error;
    }
    return new CliError(
        `Kvault at ${client.baseUrl} refused the API key for its settings (the RPC). Give the key \`kvault serve\` printed, the server's own, with --api-key or KVAULT_API_KEY.`,
        "key_refused",
        exitCodes.refused
    );
}
