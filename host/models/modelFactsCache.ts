import fs from "node:fs";
import path from "node:path";
import type { ModelFacts } from "../../contract/models.js";
import type { ModelInspector } from "./inspectModelInChild.js";

/**
 * `inspect`, with each file's facts kept: an inspection forks a child and reads the header
 * (seconds on a large file), and `/v1/models` asks on every call, a model switch asks again for
 * the file the panel just inspected, and the loaded model changes only with a switch. One cached
 * inspector is shared by all of them (serve.ts, main/engine/startEngine.ts), so a file is
 * inspected once.
 *
 * Kept by the file as it is on disk (its resolved path, size and modification time) and the
 * estimate asked for: a file replaced under the same name (a download finished over it, a user
 * copied another model there) is a new file and is inspected again, so the switch's safety check
 * never answers with an older file's verdict. A failed inspection is not kept, so the next call
 * tries again; a file that cannot be stat'ed is inspected without the cache (the inspector says why).
 */
export function cachedModelInspector(inspect: ModelInspector): ModelInspector {
    const facts = new Map<string, Promise<ModelFacts>>();
    return (modelPath, estimateFor) => {
        const key = fileKey(modelPath, estimateFor);
        if (key === undefined) {
            return inspect(modelPath, estimateFor);
        }
        let entry = facts.get(key);
        if (entry === undefined) {
            entry = inspect(modelPath, estimateFor);
            facts.set(key, entry);
            entry.catch(() => facts.delete(key));
        }
        return entry;
    };
}

/** The facts of each model file for one estimate, through `inspect` (a cachedModelInspector to share its cache). */
export function modelFactsCache(
    inspect: ModelInspector,
    estimateFor: { readonly contextSize: number; readonly sequences: number }
): (modelPath: string) => Promise<ModelFacts> {
    const cached = cachedModelInspector(inspect);
    return (modelPath) => cached(modelPath, estimateFor);
}

function fileKey(modelPath: string, estimateFor: { readonly contextSize: number; readonly sequences: number }): string | undefined {
    try {
        const resolved = path.resolve(modelPath);
        const stat = fs.statSync(resolved);
        return [resolved, stat.size, stat.mtimeMs, estimateFor.contextSize, estimateFor.sequences].join("\0");
    } catch {
        return undefined;
    }
}
