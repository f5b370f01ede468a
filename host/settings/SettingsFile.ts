import fs from "node:fs/promises";
import { KvaultError } from "../../engine/index.js";
import { removeStaleTemporaries, writeFileAtomic } from "../store/writeFileAtomic.js";
import { newApiKey, serializeSettings, type KvaultSettings } from "./KvaultSettings.js";
import { parseSettingsFile } from "./parseSettingsFile.js";

/** The settings file could not be written; the previous settings stay in force and on disk. */
export class SettingsWriteError extends KvaultError {
    readonly code = "settings_write_failed";
}

export interface SettingsFileOptions {
    readonly log: (line: string) => void;
    readonly makeApiKey?: () => string;
}

/**
 * Kvault's settings, in one small JSON file (`<data-dir>/settings.json`, mode 0600: it holds API
 * keys). Read once at start (a missing or broken file never stops Kvault: usable fields are kept,
 * the rest get defaults, and an unreadable file is moved aside rather than overwritten), then
 * changed only through `save`, which writes atomically and in call order.
 */
export class SettingsFile {
    #current: KvaultSettings;
    #writing: Promise<unknown> = Promise.resolve();

    private constructor(
        readonly filePath: string,
        settings: KvaultSettings,
        /** What reading the file at start found unusable, one line each. */
        readonly problems: readonly string[]
    ) {
        this.#current = settings;
    }

    /**
     * Reads the settings at start. The caller holds the data directory's lock: a write a killed
     * Kvault left half done (a temporary file with every key secret of that moment) is removed first.
     */
    static async open(filePath: string, options: SettingsFileOptions): Promise<SettingsFile> {
        const { log } = options;
        let text: string | undefined;
        const problems: string[] = [];
        const stale = await removeStaleTemporaries(filePath).catch((error: unknown) => {
            problems.push(`Could not remove the settings' unfinished writes (${(error as Error).message}); they may hold API keys.`);
            return [];
        });
        if (stale.length > 0) {
            log(`Settings: removed ${stale.length} unfinished write(s) of a Kvault that was stopped while saving: ${stale.join(", ")}.`);
        }
        try {
            text = await fs.readFile(filePath, "utf8");
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
                problems.push(`Could not read the settings (${(error as Error).message}); using the defaults.`);
            }
        }
        let value: unknown = {};
        if (text !== undefined) {
            try {
                value = JSON.parse(text);
            } catch (error) {
                const aside = `${filePath}.unreadable-${Date.now()}`;
                problems.push(
                    `The settings file is not JSON (${(error as Error).message}); it was moved to ${aside} and the defaults are used.`
                );
                await fs.rename(filePath, aside).catch(() => undefined);
            }
        }
        const parsed = parseSettingsFile(value, options.makeApiKey ?? newApiKey);
        // A first start has no file to complain about.
        problems.push(...(text === undefined ? [] : parsed.problems));
        for (const problem of problems) {
            log(`Settings: ${problem}`);
        }
        const store = new SettingsFile(filePath, parsed.settings, problems);
        // Written back when it differs (first start, a new API key, a repaired field, an older version), so the key is stable from now on.
        if (text !== serializeSettings(parsed.settings)) {
            await store.save(parsed.settings).catch((error: unknown) => log((error as Error).message));
        }
        return store;
    }

    get current(): KvaultSettings {
        return this.#current;
    }

    /** Writes `next` and then makes it current; throws SettingsWriteError, leaving both as they were. */
    async save(next: KvaultSettings): Promise<void> {
        await this.update(() => next);
    }

    /** Applies `change` to the settings in force when its turn comes (after the saves before it), and saves that. */
    update(change: (current: KvaultSettings) => KvaultSettings): Promise<KvaultSettings> {
        const run = this.#writing.then(async () => {
            const next = Object.freeze(change(this.#current));
            await writeFileAtomic(this.filePath, serializeSettings(next)).catch((error: unknown) => {
                throw new SettingsWriteError(
                    `Could not save the settings to ${this.filePath} (${(error as Error).message}). Check that the folder exists and is writable.`,
                    { cause: error }
                );
            });
            this.#current = next;
            return next;
        });
        this.#writing = run.catch(() => undefined);
        return run;
    }
}
