import { create } from "zustand";
import type { ResourceUse } from "../../contract/resourceUse.js";

export interface ResourceState {
    /** The engine's latest answer to resourceUse; the status bar mirrors it and never edits it. */
    readonly use: ResourceUse | undefined;
    /** Why the last one could not be read, if it could not. */
    readonly error: string | undefined;
}

/** The renderer's mirror of the engine's resource use, written only by useResourceMirror. */
export const useResourceStore = create<ResourceState>()(() => ({ use: undefined, error: undefined }));
