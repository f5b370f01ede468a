import { create } from "zustand";
import type { LibraryModel, LibraryProblem, ModelDownload, ModelFacts } from "../../contract/models.js";

/** A failed model call as the panel shows it: the host's stable code and its message. */
export interface ModelFailure {
    readonly code: string;
    readonly message: string;
}

export interface ModelState {
    /** The path last inspected, its facts or why they could not be read. */
    readonly inspection: {
        readonly running: boolean;
        readonly path?: string;
        readonly facts?: ModelFacts;
        readonly error?: ModelFailure;
    };
    /** A model switch: in flight (to `model`), or the last one's failure. */
    readonly loading: {
        readonly running: boolean;
        readonly model?: string;
        readonly error?: ModelFailure;
    };
    /** The host's downloads as last listed, oldest first. */
    readonly downloads: readonly ModelDownload[];
    /** A download being asked for, or why the last one (or a cancel, a resume, or the list) was refused. */
    readonly download: {
        readonly starting: boolean;
        readonly error?: ModelFailure;
    };
    /** The host's model library as last listed (most recently used first), or why it could not be listed or changed. */
    readonly library: {
        readonly models: readonly LibraryModel[];
        readonly problems: readonly LibraryProblem[];
        readonly error?: ModelFailure;
    };
}

export type ModelStore = ReturnType<typeof createModelStore>;

/** What the model manager shows; page-lifetime only, written by ModelController. */
export function createModelStore() {
    return create<ModelState>()(() => ({
        inspection: { running: false },
        loading: { running: false },
        downloads: [],
        download: { starting: false },
        library: { models: [], problems: [] }
    }));
}

export const useModelStore = createModelStore();
