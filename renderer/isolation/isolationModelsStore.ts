import { create } from "zustand";
import type { AuditSummary, CanaryReport, DrillReport } from "../../contract/isolation.js";
import type { IsolationFailure } from "../stores/isolationStore.js";

/** Which loaded models the Isolation view's audit, canary and drills run on: one (undefined: the host's own), or every loaded one. */
export type IsolationTarget = { readonly kind: "one"; readonly model?: string } | { readonly kind: "all" };

/** One model's answer in a run over every loaded model. */
export interface ModelRow<T> {
    /** listLocalModels' id. */
    readonly model: string;
    readonly running: boolean;
    readonly result?: T;
    readonly error?: IsolationFailure;
}

/** A run over every loaded model: a row per model, in the order they run (one after another). */
export interface ModelRows<T> {
    readonly running: boolean;
    readonly rows: readonly ModelRow<T>[];
}

export interface IsolationModelsState {
    readonly target: IsolationTarget;
    /** The last runs over every loaded model, started from the view. */
    readonly audit?: ModelRows<AuditSummary>;
    readonly canary?: ModelRows<CanaryReport>;
    /** By drill id. */
    readonly drills: Readonly<Record<string, ModelRows<DrillReport>>>;
    setTarget(target: IsolationTarget): void;
}

export type IsolationModelsStore = ReturnType<typeof createIsolationModelsStore>;

/** UI state of the Isolation view's model choice and its runs over every loaded model; written by IsolationController. */
export function createIsolationModelsStore() {
    return create<IsolationModelsState>()((set) => ({
        target: { kind: "one" },
        drills: {},
        setTarget: (target) => set({ target })
    }));
}

export const useIsolationModelsStore = createIsolationModelsStore();

/** The model a single run names (undefined: the host's own), or undefined when the view runs over every loaded model. */
export function targetModelParams(target: IsolationTarget): { readonly model?: string } {
    return target.kind === "one" && target.model !== undefined ? { model: target.model } : {};
}
