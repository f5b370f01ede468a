import type { AppSettingsView } from "../../contract/KvaultBridge.js";
import type { LocalApiController } from "../localApi/LocalApiController.js";
import { parseLocalApiChange, type ThemeSource } from "./AppSettings.js";
import type { SettingsStore } from "./SettingsStore.js";

/**
 * The settings the renderer can see and change, kept in step with what runs: a local API switch
 * is saved only once the server is in that state, so the file never claims an API that the user
 * was told could not start. Changes run one at a time, in call order.
 */
export class SettingsService {
    #queue: Promise<unknown> = Promise.resolve();

    constructor(
        private readonly store: SettingsStore,
        private readonly localApi: LocalApiController,
        private readonly log: (line: string) => void
    ) {}

    view(): AppSettingsView {
        const { localApi, modelPath } = this.store.current;
        return { localApi: { ...localApi, ...this.localApi.status }, modelPath };
    }

    /** At launch: starts the API if the saved settings say so. A failure is logged and shown in the view, not thrown. */
    startLocalApi(): Promise<void> {
        return this.#serialized(async () => {
            await this.localApi.apply(this.store.current.localApi).catch((error: unknown) => {
                this.log(`The local API is enabled but could not start: ${(error as Error).message}`);
            });
        });
    }

    /**
     * Validates the change (InvalidRequestError), applies it, then saves it. If the server cannot
     * get there, the previous state is restored, nothing is saved, and the error is thrown.
     */
    setLocalApi(value: unknown): Promise<AppSettingsView> {
        const change = parseLocalApiChange(value);
        return this.#serialized(async () => {
            const previous = this.store.current;
            const next = Object.freeze({ ...previous, localApi: Object.freeze({ ...previous.localApi, ...change }) });
            try {
                await this.localApi.apply(next.localApi);
            } catch (error) {
                await this.localApi.apply(previous.localApi).catch(() => undefined);
                throw error;
            }
            try {
                await this.store.save(next);
            } catch (error) {
                await this.localApi.apply(previous.localApi).catch(() => undefined);
                throw error;
            }
            return this.view();
        });
    }

    /** The model loaded now (null for the demo model), saved so the next start loads it again. */
    rememberModel(modelPath: string | null): Promise<void> {
        return this.#serialized(async () => {
            if (this.store.current.modelPath !== modelPath) {
                await this.store.save(Object.freeze({ ...this.store.current, modelPath }));
            }
        });
    }

    get theme(): ThemeSource {
        return this.store.current.theme;
    }

    setTheme(theme: ThemeSource): Promise<void> {
        return this.#serialized(async () => {
            if (this.store.current.theme !== theme) {
                await this.store.save(Object.freeze({ ...this.store.current, theme }));
            }
        });
    }

    #serialized<T>(task: () => Promise<T>): Promise<T> {
        const run = this.#queue.then(task);
        this.#queue = run.catch(() => undefined);
        return run;
    }
}
