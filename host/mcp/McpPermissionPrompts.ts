// Tool calls waiting for the user's answer (allow once, for this chat, always, or deny), by turn
// and call: a chat's turn asks (host/mcp/mcpToolTurns.ts), any page that follows the turn answers
// (rpcSpec answerToolCall). A Stop, or the turn's end for any other reason, ends the wait.
import type { McpPermission } from "../../contract/mcp.js";
import { McpToolDeniedError } from "./mcpErrors.js";

interface Waiting {
    readonly resolve: (permission: McpPermission) => void;
}

export class McpPermissionPrompts {
    readonly #waiting = new Map<string, Waiting>();

    /** Waits for the user's answer to `callId` of turn `requestId`; rejects with McpToolDeniedError when `signal` aborts first. */
    ask(requestId: string, callId: string, signal: AbortSignal): Promise<McpPermission> {
        const key = promptKey(requestId, callId);
        return new Promise<McpPermission>((resolve, reject) => {
            const stopped = (): void => {
                this.#waiting.delete(key);
                reject(new McpToolDeniedError("The turn was stopped while the tool call waited for permission; the tool did not run."));
            };
            if (signal.aborted) {
                stopped();
                return;
            }
            signal.addEventListener("abort", stopped, { once: true });
            this.#waiting.set(key, {
                resolve: (permission) => {
                    signal.removeEventListener("abort", stopped);
                    this.#waiting.delete(key);
                    resolve(permission);
                }
            });
        });
    }

    /** The user's answer; false when no call by that id waits (answered already, or its turn ended). */
    answer(requestId: string, callId: string, permission: McpPermission): boolean {
        const waiting = this.#waiting.get(promptKey(requestId, callId));
        waiting?.resolve(permission);
        return waiting !== undefined;
    }
}

function promptKey(requestId: string, callId: string): string {
    return `${requestId}\u0000${callId}`;
}
