import fs from "node:fs/promises";
import { KvaultError } from "../../engine/index.js";
import { writeFileAtomic } from "../../host/store/writeFileAtomic.js";
import { parseAppSettings, newApiKey, type AppSettings } from "./AppSettings.js";

/** The settings file could not be written; the previous settings stay in force and on disk. */
export class SettingsWriteError extends KvaultError {
    readonly code = "settings_write_failed";
}

export interface SettingsStoreOptions {
    readonly log: (line: string) => void;
    readonly makeApiKey?: () => string;
}

/**
 * The app's settings, in one small JSON file in userData. Read once at start (a missing or broken
 * file never stops the app: usable fields are kept, the rest get defaults, and an unreadable file
 * is moved aside rather than overwritten), then changed only through `save`, which writes
 * atomically and in call order.
 */
export class SettingsStore {
    #current: AppSettings;
    #writing: Promise<unknown> = Promise.resolve();

    private constructor(
        readonly filePath: string,
        settings: AppSettings
    ) {
        this.#current = settings;
    }

    static async open(filePath: string, options: SettingsStoreOptions): Promise<SettingsStore> {
        const { log } = options;
        let text: string | undefined;
        try {
            text = await fs.readFile(filePath, "utf8");
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
                log(`Could not read the settings (${(error as Error).message}); using the defaults.`);
            }
        }
        let value: unknown = {};
        if (text !== undefined) {
            try {
                value = JSON.parse(text);
            } catch (error) {
                const aside = `${filePath}.unreadable-${Date.now()}`;
                log(`The settings file is not JSON (${(error as Error).message}); it was moved to ${aside} and the defaults are used.`);
                await fs.rename(filePath, aside).catch(() => undefined);
            }
        }
        const { settings, problems } = parseAppSettings(value, options.makeApiKey ?? newApiKey);
        // A first start has no file to complain about.
        for (const problem of text === undefined ? [] : problems) {
            log(`Settings: ${problem}`);
        }
        const store = new SettingsStore(filePath, settings);
        // Written back when it differs (first start, a new API key, a repaired field), so the key is stable from now on.
        if (text !== serialize(settings)) {
            await store.save(settings).catch((error: unknown) => log((error as Error).message));
        }
        return store;
    }

    get current(): AppSettings {
        return this.#current;
    }

    /** Writes `next` and then makes it current; throws SettingsWriteError, leaving both as they were. */
    save(next: AppSettings): Promise<void> {
        const write = this.#writing.then(async () => {
            try {
                await writeFileAtomic(this.filePath, serialize(next));
            } catch (error) {
                throw new SettingsWriteError(
                    `Could not save the settings to ${this.filePath} (${(error as Error).message}). Check that the folder exists and is writable.`,
                    { cause: error }
                );
            }
            this.#current = next;
        });
        this.#writing = write.catch(() => undefined);
        return write;
    }
}

function serialize(settings: AppSettings): string {
    return `${JSON.stringify(settings, null, 4)}\n`;
}
