import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Preset, PresetImportResult, PresetList } from "../../contract/presets.js";
import { presetLimits } from "../../contract/presets.js";
import { readPreset } from "../../contract/rpc/presetSchemas.js";
import { describe, parseJsonObject } from "../store/readStoredValues.js";
import { writeFileAtomic } from "../store/writeFileAtomic.js";
import { PresetFileError, PresetImportError, PresetLimitError } from "./presetErrors.js";
import { readPresetImport } from "./readPresetImport.js";
import { shippedPresets } from "./shippedPresets.js";

/** The presets file's format; a newer one is refused, never rewritten. */
const PRESET_FILE_VERSION = 1;

/**
 * The saved presets, in `presets.json` in the data directory: the shipped ones until the first
 * change. Changes run one at a time, each on disk (written atomically) before memory changes, so
 * what `list` answers is what the next start reads.
 */
export class PresetStore {
    #presets: readonly Preset[];
    #queue: Promise<unknown> = Promise.resolve();

    private constructor(
        private readonly file: string,
        presets: readonly Preset[]
    ) {
        this.#presets = presets;
    }

    /** Reads the presets of `dataDir`; a file that is not one Kvault wrote rejects with PresetFileError and is left as it is. */
    static async open(dataDir: string): Promise<PresetStore> {
        const file = path.join(dataDir, "presets.json");
        let text: string;
        try {
            text = await fs.readFile(file, "utf8");
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT") {
                return new PresetStore(file, shippedPresets);
            }
            throw new PresetFileError(file, (error as Error).message);
        }
        const parsed = parseJsonObject(text);
        if (!parsed.ok) {
            throw new PresetFileError(file, `it is ${parsed.reason}`);
        }
        if (parsed.value.v !== PRESET_FILE_VERSION) {
            throw new PresetFileError(file, `its format is ${describe(parsed.value.v)}; this Kvault reads format ${PRESET_FILE_VERSION}`);
        }
        const items = parsed.value.presets;
        if (!Array.isArray(items) || items.length > presetLimits.maxPresets) {
            throw new PresetFileError(file, `presets is ${describe(items)}, not a list of at most ${presetLimits.maxPresets}`);
        }
        const presets: Preset[] = [];
        for (const [index, item] of items.entries()) {
            const read = readPreset(item);
            if (!read.ok) {
                throw new PresetFileError(file, `presets[${index}]: ${read.reason}`);
            }
            presets.push(read.value);
        }
        return new PresetStore(file, presets);
    }

    list(): PresetList {
        return { presets: this.#presets };
    }

    /** Adds `preset` at the end, or replaces the one with its id (an edit). */
    save(preset: Preset): Promise<PresetList> {
        return this.#change(() => {
            const index = this.#presets.findIndex((item) => item.id === preset.id);
            return index === -1 ? [...this.#presets, preset] : this.#presets.map((item, at) => (at === index ? preset : item));
        });
    }

    remove(id: string): Promise<PresetList & { readonly deleted: boolean }> {
        return this.#enqueue(async () => {
            const kept = this.#presets.filter((item) => item.id !== id);
            const deleted = kept.length < this.#presets.length;
            if (deleted) {
                await this.#write(kept);
            }
            return { presets: this.#presets, deleted };
        });
    }

    /** Adds every preset of a file Export or LM Studio wrote, each under a new id; a bad file rejects with PresetImportError. */
    import(text: string, fileName: string): Promise<PresetImportResult> {
        const read = readPresetImport(text, fileName);
        if (!read.ok) {
            return Promise.reject(new PresetImportError(`${fileName} cannot be imported: ${read.reason}. Nothing was imported.`));
        }
        const imported = read.value.presets.map((preset) => ({ ...preset, id: `p${crypto.randomUUID().replaceAll("-", "")}` }));
        return this.#change(() => [...this.#presets, ...imported]).then((list) => ({ ...list, imported, unmapped: read.value.unmapped }));
    }

    #change(next: () => readonly Preset[]): Promise<PresetList> {
        return this.#enqueue(async () => {
            const presets = next();
            if (presets.length > presetLimits.maxPresets) {
                throw new PresetLimitError(
                    `That makes ${presets.length.toLocaleString("en-US")} presets; Kvault keeps at most ${presetLimits.maxPresets}. Delete some first.`
                );
            }
            await this.#write(presets);
            return { presets: this.#presets };
        });
    }

    async #write(presets: readonly Preset[]): Promise<void> {
        await writeFileAtomic(this.file, `${JSON.stringify({ v: PRESET_FILE_VERSION, presets }, null, 1)}\n`);
        this.#presets = presets;
    }

    #enqueue<T>(work: () => Promise<T>): Promise<T> {
        const result = this.#queue.then(work);
        this.#queue = result.catch(() => undefined);
        return result;
    }
}
