import { create } from "zustand";
import type { McpToolCallOutcome, McpToolCallRequest, McpTurnEvent } from "../../contract/mcp.js";

/** A tool call of a running turn: waiting for the user's answer until its outcome comes. */
export interface LiveToolCall {
    readonly call: McpToolCallRequest;
    readonly outcome?: McpToolCallOutcome;
}

interface LiveToolCallsState {
    /** By workspace: the running turn's calls, in order. */
    readonly byWorkspace: Readonly<Record<string, { readonly requestId: string; readonly calls: readonly LiveToolCall[] }>>;
    record(workspace: string, requestId: string, event: McpTurnEvent): void;
    /** The turn ended: its calls are in its kept answer (or gone with a failure). */
    end(workspace: string, requestId: string): void;
}

/**
 * The tool calls of the turns this page follows (their `tool` events), page-lifetime only: a
 * reloaded page hears them again when it attaches (the host replays them). A call is shown as a
 * permission prompt until its outcome arrives, then as a card.
 */
export const useLiveToolCalls = create<LiveToolCallsState>()((set) => ({
    byWorkspace: {},
    record(workspace, requestId, event) {
        set((state) => {
            const current = state.byWorkspace[workspace];
            const calls = current?.requestId === requestId ? current.calls : [];
            const callId = event.kind === "call" ? event.call.callId : event.outcome.callId;
            const others = calls.filter((item) => item.call.callId !== callId);
            const next: LiveToolCall = event.kind === "call" ? { call: event.call } : { call: event.outcome, outcome: event.outcome };
            const index = calls.findIndex((item) => item.call.callId === callId);
            const merged = index === -1 ? [...others, next] : calls.map((item, at) => (at === index ? next : item));
            return { byWorkspace: { ...state.byWorkspace, [workspace]: { requestId, calls: merged } } };
        });
    },
    end(workspace, requestId) {
        set((state) => {
            if (state.byWorkspace[workspace]?.requestId !== requestId) {
                return state;
            }
            const { [workspace]: _ended, ...rest } = state.byWorkspace;
            return { byWorkspace: rest };
        });
    }
}));
