import type { ModelFacts } from "../../contract/models.js";
import type { ModelInspector } from "./inspectModelInChild.js";

/**
 * The facts of each model path, inspected once (in a child, with its limits) and kept: `/v1/models`
 * asks on every call and the loaded model changes only with a switch. A failed inspection is not
 * kept, so the next call tries again.
 */
export function modelFactsCache(
    inspect: ModelInspector,
    estimateFor: { readonly contextSize: number; readonly sequences: number }
): (modelPath: string) => Promise<ModelFacts> {
    const facts = new Map<string, Promise<ModelFacts>>();
    return (modelPath) => {
        let entry = facts.get(modelPath);
        if (entry === undefined) {
            entry = inspect(modelPath, estimateFor);
            facts.set(modelPath, entry);
            entry.catch(() => facts.delete(modelPath));
        }
        return entry;
    };
}
