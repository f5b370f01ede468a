import type { LocalApiChange, LocalApiView } from "../../contract/settings.js";
import type { KvaultSettings } from "../../host/settings/KvaultSettings.js";
import type { SettingsFile } from "../../host/settings/SettingsFile.js";
import type { LocalApiController } from "../localApi/LocalApiController.js";
import { parseLocalApiChange, type ThemeSource } from "./AppSettings.js";

/**
 * The desktop app's own settings, kept in step with what runs: the local API switch (saved only
 * once the server is in that state, so the file never claims an API that the user was told could
 * not start), the model loaded last and the theme. Changes run one at a time, in call order. The
 * rest of the settings screen (engine settings, API keys) is host/settings/SettingsHost.ts.
 */
export class SettingsService {
    #queue: Promise<unknown> = Promise.resolve();

    constructor(
        private readonly file: SettingsFile,
        private readonly localApi: LocalApiController,
        private readonly log: (line: string) => void
    ) {}

    /** The local API as the settings screen shows it. */
    localApiView(settings: KvaultSettings = this.file.current): LocalApiView {
        return { ...settings.localApi, ...this.localApi.status, editable: true };
    }

    /** At launch: starts the API if the saved settings say so. A failure is logged and shown in the view, not thrown. */
    startLocalApi(): Promise<void> {
        return this.#serialized(async () => {
            await this.localApi.apply(this.file.current.localApi).catch((error: unknown) => {
                this.log(`The local API is enabled but could not start: ${(error as Error).message}`);
            });
        });
    }

    /**
     * Validates the change (InvalidRequestError), applies it, then saves it. If the server cannot
     * get there, the previous state is restored, nothing is saved, and the error is thrown.
     */
    setLocalApi(value: unknown): Promise<LocalApiView> {
        const change: LocalApiChange = parseLocalApiChange(value);
        return this.#serialized(async () => {
            const previous = this.file.current;
            const next = Object.freeze({ ...previous, localApi: Object.freeze({ ...previous.localApi, ...change }) });
            try {
                await this.localApi.apply(next.localApi);
            } catch (error) {
                await this.localApi.apply(previous.localApi).catch(() => undefined);
                throw error;
            }
            try {
                await this.file.update((current) => ({ ...current, localApi: next.localApi }));
            } catch (error) {
                await this.localApi.apply(previous.localApi).catch(() => undefined);
                throw error;
            }
            return this.localApiView();
        });
    }

    /** The model loaded now (null for the demo model), saved so the next start loads it again. */
    rememberModel(modelPath: string | null): Promise<void> {
        return this.#serialized(async () => {
            if (this.file.current.modelPath !== modelPath) {
                await this.file.update((current) => ({ ...current, modelPath }));
            }
        });
    }

    /** The model the app loads at start (null: the demo model). */
    get modelPath(): string | null {
        return this.file.current.modelPath;
    }

    get theme(): ThemeSource {
        return this.file.current.theme;
    }

    setTheme(theme: ThemeSource): Promise<void> {
        return this.#serialized(async () => {
            if (this.file.current.theme !== theme) {
                await this.file.update((current) => ({ ...current, theme }));
            }
        });
    }

    #serialized<T>(task: () => Promise<T>): Promise<T> {
        const run = this.#queue.then(task);
        this.#queue = run.catch(() => undefined);
        return run;
    }
}
