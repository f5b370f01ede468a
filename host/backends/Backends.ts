// The remote backends in force, by name: what the UI lists, what a workspace's turn and Kvault's
// gateway route to. One live set per host, which every part reads through at each call (route,
// get, all, views), so the settings screen's changes take effect without a restart: `replace`
// plans what changes, then swaps the set at once.
import type { BackendView } from "../../contract/backends.js";
import { invariant } from "../../engine/index.js";
import type { BackendConfig } from "./BackendConfig.js";
import { backendLimits, type BackendLimits, BackendNotFoundError } from "./backendErrors.js";
import { RemoteBackend } from "./RemoteBackend.js";

/** What replacing the set with other configurations changes, by name (planned before anything changes). */
export interface BackendsPlan {
    readonly added: readonly string[];
    /** Kept by name, with another URL, key, model or reach: a new RemoteBackend. */
    readonly changed: readonly string[];
    readonly removed: readonly string[];
    /** The same configuration: the same RemoteBackend, untouched. */
    readonly kept: readonly string[];
}

export class Backends {
    #byName = new Map<string, RemoteBackend>();

    constructor(
        configs: readonly BackendConfig[],
        /** The bounds every backend of the set reads under (a policy: tests pass tighter ones). */
        private readonly limits: BackendLimits = backendLimits
    ) {
        this.replace(configs);
    }

    get size(): number {
        return this.#byName.size;
    }

    all(): RemoteBackend[] {
        return [...this.#byName.values()];
    }

    /** What `replace(configs)` would change; changes nothing. Throws (a bug) on a name given twice. */
    plan(configs: readonly BackendConfig[]): BackendsPlan {
        const names = new Set<string>();
        for (const config of configs) {
            invariant(!names.has(config.name), `the backend name "${config.name}" is given twice among ${configs.length} backends`);
            names.add(config.name);
        }
        const byName = (kind: "added" | "changed" | "kept"): string[] =>
            configs
                .filter((config) => {
                    const now = this.#byName.get(config.name)?.config;
                    return kind === "added" ? now === undefined : now !== undefined && sameConfig(now, config) === (kind === "kept");
                })
                .map((config) => config.name);
        return {
            added: byName("added"),
            changed: byName("changed"),
            removed: [...this.#byName.keys()].filter((name) => !names.has(name)),
            kept: byName("kept")
        };
    }

    /**
     * Puts `configs` in force, in their order, and says what changed. A call already routed keeps
     * the RemoteBackend it got: a turn running on a backend removed or changed here finishes on
     * it; the next turn routes through the new set (a removed backend's is BackendNotFoundError).
     */
    replace(configs: readonly BackendConfig[]): BackendsPlan {
        const plan = this.plan(configs);
        const next = new Map<string, RemoteBackend>();
        for (const config of configs) {
            const kept = plan.kept.includes(config.name) ? this.#byName.get(config.name) : undefined;
            next.set(config.name, kept ?? new RemoteBackend(config, this.limits));
        }
        this.#byName = next;
        return plan;
    }

    /** The backend called `name`, or BackendNotFoundError naming the ones there are. */
    get(name: string): RemoteBackend {
        const backend = this.#byName.get(name);
        if (backend === undefined) {
            const known = [...this.#byName.keys()];
            throw new BackendNotFoundError(
                `There is no backend "${name.slice(0, 80)}" in this Kvault now (${known.length === 0 ? "it has none" : `it has ${known.map((known) => `"${known}"`).join(", ")}`}). Add it in Settings › Remote backends, or start the server with --backend ${name.slice(0, 40)}=URL; or choose another.`
            );
        }
        return backend;
    }

    /**
     * A model id of Kvault's API split into its backend and the backend's own id: `NAME/<id>` (the
     * id may hold more '/'); undefined when the part before the first '/' names no backend.
     */
    route(modelId: string): { readonly backend: RemoteBackend; readonly model: string } | undefined {
        const slash = modelId.indexOf("/");
        const backend = slash <= 0 ? undefined : this.#byName.get(modelId.slice(0, slash));
        return backend === undefined ? undefined : { backend, model: modelId.slice(slash + 1) };
    }

    /** Each backend with its models now, asked at once; a backend that cannot be asked is listed with why. */
    async views(signal?: AbortSignal): Promise<BackendView[]> {
        return Promise.all(
            this.all().map(async (backend): Promise<BackendView> => {
                const base = { name: backend.name, apiBase: backend.config.apiBase, remote: backend.config.remote };
                try {
                    return { ...base, models: await backend.models(signal) };
                } catch (error) {
                    const code = (error as { code?: unknown }).code;
                    return {
                        ...base,
                        models: [],
                        error: { code: typeof code === "string" ? code : "backend_error", message: (error as Error).message }
                    };
                }
            })
        );
    }
}

/** Whether two configurations reach the same server the same way (name aside). */
function sameConfig(a: BackendConfig, b: BackendConfig): boolean {
    return (
        a.apiBase === b.apiBase &&
        a.root === b.root &&
        a.key === b.key &&
        a.keyEnv === b.keyEnv &&
        a.model === b.model &&
        a.remote === b.remote
    );
}
