// What a turn's caller hears while it runs, in one shape from the engine to the renderer: the
// engine process sends these (EngineEvent), the host forwards them to the page that follows the
// turn (the RPC's turn events), and the page reads them as they came. In process, a caller of
// EngineClient.chat hears the same events through TurnCallbacks; the two functions below are the
// only conversions between the two, used where a turn crosses a process boundary.
import type { TokenLogprob, TurnCallbacks } from "./engineProtocol.js";
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

/** Hears one turn's events (a page's listener, the host's forwarding to a page). */
export type TurnEventListener = (event: TurnEvent) => void;

/**
 * Reads a message as a turn event, or undefined when it is none: the fields each type carries
 * checked, nothing rebuilt. Where events arrive from another process (the renderer from its host).
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

/** A turn's callbacks as the events they stand for, each handed to `send` (the engine's process, the host's RPC). */
export function turnEventSender(requestId: string, send: (event: TurnEvent) => void): TurnCallbacks {
    return {
        onQueued: (position) => send({ type: "queued", requestId, position }),
        onStarted: () => send({ type: "started", requestId }),
        onText: (text, logprobs) => send({ type: "text", requestId, text, ...(logprobs === undefined ? {} : { logprobs }) }),
        onTool: (tool) => send({ type: "tool", requestId, tool })
    };
}

/** Hands `event` to the callback that stands for it (the host, for an event from the engine's process). */
export function deliverTurnEvent(callbacks: TurnCallbacks, event: TurnEvent): void | Promise<void> {
    switch (event.type) {
        case "queued":
            return callbacks.onQueued?.(event.position);
        case "started":
            return callbacks.onStarted?.();
        case "text":
            return callbacks.onText?.(event.text, event.logprobs);
        case "tool":
            return callbacks.onTool?.(event.tool);
    }
}
