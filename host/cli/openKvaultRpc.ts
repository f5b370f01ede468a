import { RpcClient, WebSocketTransport } from "../../contract/rpcClient/index.js";
import { CliError } from "./CliError.js";
import { exitCodes } from "./exitCodes.js";
import { handshakeStatus, type HandshakeAnswer } from "./handshakeStatus.js";
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
        throw whyRefused(client, await handshakeStatus(url, RPC_TIMEOUT_MS));
    }
}

/** Why the RPC connection did not open, from what the server answered a handshake (handshakeStatus.ts). */
function whyRefused(client: KvaultClient, answer: HandshakeAnswer): CliError {
    if ("unreachable" in answer) {
        return new CliError(
            `No Kvault answered at ${client.baseUrl} (${answer.unreachable}). Start one with \`kvault serve\`, or give its address with --url or KVAULT_URL.`,
            "server_unreachable",
            exitCodes.unreachable
        );
    }
    if (answer.status === 401) {
        return new CliError(
            `Kvault at ${client.baseUrl} refused the API key for its settings (401). Give the key \`kvault serve\` printed, the server's own, with --api-key or KVAULT_API_KEY.`,
            "key_refused",
            exitCodes.refused
        );
    }
    return new CliError(`Kvault at ${client.baseUrl} refused the RPC connection (${answer.status}).`, "rpc_refused");
}
