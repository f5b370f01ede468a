import { create } from "zustand";
import type { AttachmentKind } from "../../contract/attachments.js";

/** A file attached to the draft: its text as the host read it, its block's tokens as the loaded model counts them. */
export interface AttachedFile {
    readonly id: string;
    readonly name: string;
    readonly kind: AttachmentKind;
    /** The block sent in the message (contract/attachments.ts attachmentBlock). */
    readonly block: string;
    readonly numTokens: number;
    /** Set for a file too large to fit that went into the workspace's retrieval index instead: its chunks; its block is then empty. */
    readonly numChunks?: number;
}

interface AttachmentState {
    /** Per workspace, in the order attached. */
    readonly files: Readonly<Record<string, readonly AttachedFile[]>>;
    /** Per workspace, why the last files were refused (each with its numbers). */
    readonly refusals: Readonly<Record<string, readonly string[]>>;
    /** Per workspace, the files in its retrieval index (retrievalStatus), which a question is then searched against. */
    readonly numIndexed: Readonly<Record<string, number>>;
    setIndexed(workspace: string, numFiles: number): void;
    /** Per workspace, files being read now. */
    readonly numReading: Readonly<Record<string, number>>;
    add(workspace: string, file: AttachedFile): void;
    remove(workspace: string, id: string): void;
    /** After a send: the files went with the message. */
    clear(workspace: string): void;
    refuse(workspace: string, reason: string): void;
    dismissRefusals(workspace: string): void;
    reading(workspace: string, delta: 1 | -1): void;
}

const none: readonly AttachedFile[] = [];

/** The draft's attached files, per workspace: UI state until they are sent (then they are the message's text). */
export const useAttachmentStore = create<AttachmentState>()((set) => ({
    files: {},
    refusals: {},
    numReading: {},
    numIndexed: {},
    setIndexed: (workspace, numFiles) => set((state) => ({ numIndexed: { ...state.numIndexed, [workspace]: numFiles } })),
    add: (workspace, file) => set((state) => ({ files: { ...state.files, [workspace]: [...(state.files[workspace] ?? none), file] } })),
    remove: (workspace, id) =>
        set((state) => ({ files: { ...state.files, [workspace]: (state.files[workspace] ?? none).filter((file) => file.id !== id) } })),
    clear: (workspace) => set((state) => ({ files: { ...state.files, [workspace]: none } })),
    refuse: (workspace, reason) =>
        set((state) => ({ refusals: { ...state.refusals, [workspace]: [...(state.refusals[workspace] ?? []), reason] } })),
    dismissRefusals: (workspace) => set((state) => ({ refusals: { ...state.refusals, [workspace]: [] } })),
    reading: (workspace, delta) =>
        set((state) => ({ numReading: { ...state.numReading, [workspace]: (state.numReading[workspace] ?? 0) + delta } }))
}));

/** The blocks of a workspace's attached files, in order (a stable empty list when there are none). */
export function attachedBlocks(workspace: string): readonly string[] {
    return (useAttachmentStore.getState().files[workspace] ?? none).map((file) => file.block);
}

export function useAttachedFiles(workspace: string): readonly AttachedFile[] {
    return useAttachmentStore((state) => state.files[workspace] ?? none);
}
