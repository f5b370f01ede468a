import { create } from "zustand";
import type { DraftMeasurement } from "../../contract/engineProtocol.js";

/** A measurement and what it measured: it holds only while the draft and conversation are unchanged. */
export interface MeasuredDraft {
    readonly draft: string;
    /** conversationKey of the conversation it was measured against. */
    readonly conversationKey: string;
    readonly result: DraftMeasurement;
}

export interface DraftState {
    /** The composer's text, by workspace: a draft survives switching workspaces. */
    readonly drafts: Readonly<Record<string, string>>;
    readonly measured: Readonly<Record<string, MeasuredDraft>>;
    readonly measureErrors: Readonly<Record<string, string>>;
    setDraft(workspace: string, draft: string): void;
    setMeasured(workspace: string, measured: MeasuredDraft): void;
    setMeasureError(workspace: string, message: string): void;
    forget(workspace: string): void;
}

/** Drafts and their measurements (UI state, not persisted). */
export function createDraftStore() {
    return create<DraftState>()((set) => ({
        drafts: {},
        measured: {},
        measureErrors: {},
        setDraft: (workspace, draft) => set((state) => ({ drafts: { ...state.drafts, [workspace]: draft } })),
        setMeasured: (workspace, measured) =>
            set((state) => {
                const measureErrors = { ...state.measureErrors };
                delete measureErrors[workspace];
                return { measured: { ...state.measured, [workspace]: measured }, measureErrors };
            }),
        setMeasureError: (workspace, message) => set((state) => ({ measureErrors: { ...state.measureErrors, [workspace]: message } })),
        forget: (workspace) =>
            set((state) => {
                const drafts = { ...state.drafts };
                const measured = { ...state.measured };
                const measureErrors = { ...state.measureErrors };
                delete drafts[workspace];
                delete measured[workspace];
                delete measureErrors[workspace];
                return { drafts, measured, measureErrors };
            })
    }));
}

export const useDraftStore = createDraftStore();
