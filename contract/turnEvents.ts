// What a turn's caller hears while it runs, in one shape from the engine to the renderer: the
// engine's service emits these to the listener it is handed, the engine process sends them to its
// host as they are (EngineEvent), the host hands them to its runner's listener and forwards them to
// the page that follows the turn (the RPC's turn events), and the page reads them as they came.
// Nothing converts them on the way; every event carries the turn's `requestId`.
import type { TokenLogprob } from "./engineProtocol.js";
import type { McpTurnEvent } from "./mcp.js";

export type TurnEvent =
    /** The turn waits, with its 1-based place in the queue. */
    | { readonly type: "queued"; readonly requestId: string; readonly position: number }
    /** The turn has its decode sequence and runs. */
    | { readonly type: "started"; readonly requestId: string }
    /** Text as it can be shown; with logprobs asked for, the entries of the tokens that made it. */
    | { readonly type: "text"; readonly requestId: string; readonly text: string; readonly logprobs?: readonly TokenLogprob[] }
    /** A chat's turn with MCP tools (host/mcp/mcpToolTurns.ts): a call awaiting permission, then its outcome. */
    | { readonly type: "tool"; readonly requestId: string; readonly tool: McpTurnEvent };

export type TurnEventType = TurnEvent["type"];

/**
 * Hears one turn's events: what every runner of a turn takes (the engine's service, the supervisor,
 * a remote backend, the host's turns), and what a page follows a turn with. A promise back for a
 * `text` event asks for a pause: a runner that can pause (a remote backend's stream) reads no more
 * until it settles or the turn's signal aborts; the engine cannot, and does not wait. It must not reject.
 */
export type TurnListener = (event: TurnEvent) => void | Promise<void>;

/**
 * Reads a message as a turn event, or undefined when it is none: the fields each type carries
 * checked, nothing rebuilt. Where events arrive from another process (the host from its engine, the renderer from its host).
 */
export function readTurnEvent(message: unknown): TurnEvent | undefined {
    if (typeof message !== "object" || message === null) {
        return undefined;
    }
    const event = message as Record<string, unknown>;
    if (typeof event.requestId !== "string") {
        return undefined;
    }
    const fits =
        (event.type === "queued" && typeof event.position === "number") ||
        event.type === "started" ||
        (event.type === "text" && typeof event.text === "string" && (event.logprobs === undefined || Array.isArray(event.logprobs))) ||
        (event.type === "tool" && typeof event.tool === "object" && event.tool !== null);
    return fits ? (event as unknown as TurnEvent) : undefined;
}
