// The remote backends this Kvault was started with, by name: what the UI lists, what a workspace's
// turn and Kvault's gateway route to. Fixed at start (a new backend is a restart with --backend).
import type { BackendView } from "../../contract/backends.js";
import { invariant } from "../../engine/index.js";
import type { BackendConfig } from "./BackendConfig.js";
import { BackendNotFoundError } from "./backendErrors.js";
import { RemoteBackend } from "./RemoteBackend.js";

export class Backends {
    readonly #byName = new Map<string, RemoteBackend>();

    constructor(configs: readonly BackendConfig[]) {
        for (const config of configs) {
            invariant(!this.#byName.has(config.name), `the backend name "${config.name}" is given twice`);
            this.#byName.set(config.name, new RemoteBackend(config));
        }
    }

    get size(): number {
        return this.#byName.size;
    }

    all(): RemoteBackend[] {
        return [...this.#byName.values()];
    }

    /** The backend called `name`, or BackendNotFoundError naming the ones there are. */
    get(name: string): RemoteBackend {
        const backend = this.#byName.get(name);
        if (backend === undefined) {
            const known = [...this.#byName.keys()];
            throw new BackendNotFoundError(
                `There is no backend "${name.slice(0, 80)}" in this Kvault (${known.length === 0 ? "it was started with none" : `it has ${known.map((known) => `"${known}"`).join(", ")}`}). Start it with --backend ${name.slice(0, 40)}=URL, or choose another.`
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
