import { create } from "zustand";

/**
 * A turn in flight: `sending` until the server queues or starts it, `stopping` once the user
 * pressed Stop and the cancel is on its way.
 */
export type TurnPhase = "sending" | "queued" | "running" | "stopping";

export interface LiveTurn {
    readonly requestId: string;
    readonly phase: TurnPhase;
    /** Place in the engine's queue while `queued` (1 is next). */
    readonly queuePosition?: number;
    /** The answer so far. Not part of the chat until the turn finishes. */
    readonly text: string;
}

/** Why the last turn of a workspace did not produce an answer; shown in place, never stored. */
export interface TurnFailure {
    readonly code: string;
    readonly message: string;
}

export interface TurnState {
    /** By workspace id: at most one turn per workspace. */
    readonly live: Readonly<Record<string, LiveTurn>>;
    readonly failures: Readonly<Record<string, TurnFailure>>;
    begin(workspace: string, requestId: string): void;
    queued(workspace: string, requestId: string, position: number): void;
    started(workspace: string, requestId: string): void;
    appendText(workspace: string, requestId: string, text: string): void;
    stopping(workspace: string): void;
    /** Ends the turn; `failure` when it ended without an answer to keep. */
    end(workspace: string, requestId: string, failure?: TurnFailure): void;
    clearFailure(workspace: string): void;
}

/**
 * Turns in flight and the last failure, per workspace. Page-lifetime only: the turns themselves
 * run in the host, and a reloaded page attaches to them again (ChatController); the failures are forgotten.
 * Every update names the requestId, so a late event of an ended turn changes nothing.
 */
export function createTurnStore() {
    return create<TurnState>()((set) => {
        const updateLive = (workspace: string, requestId: string, update: (turn: LiveTurn) => LiveTurn): void =>
            set((state) => {
                const turn = state.live[workspace];
                return turn?.requestId === requestId ? { live: { ...state.live, [workspace]: update(turn) } } : state;
            });
        return {
            live: {},
            failures: {},
            begin(workspace, requestId) {
                set((state) => ({
                    live: { ...state.live, [workspace]: { requestId, phase: "sending", text: "" } },
                    failures: without(state.failures, workspace)
                }));
            },
            queued(workspace, requestId, position) {
                updateLive(workspace, requestId, (turn) =>
                    turn.phase === "stopping" ? turn : { ...turn, phase: "queued", queuePosition: position }
                );
            },
            started(workspace, requestId) {
                updateLive(workspace, requestId, (turn) =>
                    turn.phase === "stopping" ? turn : { requestId, phase: "running", text: turn.text }
                );
            },
            appendText(workspace, requestId, text) {
                updateLive(workspace, requestId, (turn) => ({ ...turn, text: turn.text + text }));
            },
            stopping(workspace) {
                set((state) => {
                    const turn = state.live[workspace];
                    return turn === undefined ? state : { live: { ...state.live, [workspace]: { ...turn, phase: "stopping" } } };
                });
            },
            end(workspace, requestId, failure) {
                set((state) => {
                    if (state.live[workspace]?.requestId !== requestId) {
                        return state;
                    }
                    return {
                        live: without(state.live, workspace),
                        failures: failure === undefined ? without(state.failures, workspace) : { ...state.failures, [workspace]: failure }
                    };
                });
            },
            clearFailure(workspace) {
                set((state) => (workspace in state.failures ? { failures: without(state.failures, workspace) } : state));
            }
        };
    });
}

export const useTurnStore = createTurnStore();

function without<T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> {
    const rest = { ...record };
    delete rest[key];
    return rest;
}
