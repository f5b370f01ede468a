// The model library (contract/rpc.ts listModels, forgetModel): every GGUF the user opened by path
// or downloaded, with the facts its header gave and a fingerprint, kept in `<dataDir>/models.json`
// (Electron: userData). The facts come from the engine's inspectModel; nothing here loads node-llama-cpp.
import crypto from "node:crypto";
import fs from "node:fs";
import fsPromises from "node:fs/promises";
import path from "node:path";
import type { LibraryModel, LibraryModelOrigin, LibraryProblem, ModelFacts, ModelLibraryListing } from "../../contract/models.js";
import { modelFingerprint } from "../../engine/index.js";
import { LibraryFileNotOwnedError, LibraryModelInUseError, LibraryModelUnknownError } from "./modelErrors.js";
import { preserveCopy } from "../store/preserveCopy.js";
import { isRecord } from "../store/readStoredValues.js";
import { writeFileAtomic } from "../store/writeFileAtomic.js";
import { readStoredModel, type StoredModel } from "./readStoredModel.js";
import { appRoots, defaultModelRoots, isUnderRoot } from "./modelRoots.js";

/** The format of models.json; a file with another is set aside, not guessed at. */
export const LIBRARY_VERSION = 1;

/** How a model came to the library: opened by path, or downloaded from `source`. */
export type LibraryOrigin = { readonly kind: "opened" } | { readonly kind: "downloaded"; readonly source: string };

export interface ModelLibraryOptions {
    /** `<dataDir>/models.json`. */
    readonly filePath: string;
    /** A GGUF's facts from its header: the engine's inspectModel. */
    readonly inspect: (modelPath: string) => Promise<ModelFacts>;
    /** Whether the engine runs the model at this path now: its file is never deleted. */
    readonly isLoaded?: (modelPath: string) => boolean;
    /**
     * Other apps' model folders (LM Studio's, Ollama's, Hugging Face's: host/models/modelRoots.ts);
     * a file under one is never deleted, whatever its entry says. This user's folders by default.
     */
    readonly foreignRoots?: readonly string[];
    readonly now?: () => Date;
}

/**
 * Remembers models across starts. A file gone from disk is listed as missing, never dropped; an
 * entry leaves only by forget. Writes are atomic (host/store/writeFileAtomic.ts) and one at a
 * time, in the order of the changes.
 */
export class ModelLibrary {
    readonly #models: StoredModel[];
    readonly #problems: LibraryProblem[];
    readonly #now: () => Date;
    #writes: Promise<void> = Promise.resolve();

    private constructor(
        private readonly options: ModelLibraryOptions,
        models: StoredModel[],
        problems: LibraryProblem[]
    ) {
        this.#models = models;
        this.#problems = problems;
        this.#now = options.now ?? (() => new Date());
    }

    /**
     * Reads the library. A file that is not JSON, has another format version or holds entries
     * that cannot be read is copied to `models.json.corrupt-<time>`, what could be read is kept,
     * and the listing's `problems` says so; opening never fails for the file's content.
     */
    static async open(options: ModelLibraryOptions): Promise<ModelLibrary> {
        const now = options.now ?? (() => new Date());
        const fileName = path.basename(options.filePath);
        let text: string;
        try {
            text = await fsPromises.readFile(options.filePath, "utf8");
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT") {
                return new ModelLibrary(options, [], []);
            }
            return new ModelLibrary(
                options,
                [],
                [
                    {
                        code: "library_unreadable",
                        copy: undefined,
                        message: `${options.filePath} could not be read (${(error as Error).message}); the library starts empty. Check the file's permissions.`
                    }
                ]
            );
        }
        const { models, damage } = parseLibrary(text);
        if (damage === undefined) {
            return new ModelLibrary(options, models, []);
        }
        const copy = await preserveCopy(options.filePath, now()).catch(() => undefined);
        const kept =
            models.length === 0
                ? "the library starts empty"
                : `the ${models.length.toLocaleString("en-US")} readable ${models.length === 1 ? "entry was" : "entries were"} kept`;
        const library = new ModelLibrary(options, models, [
            {
                code: "library_corrupt",
                copy,
                message: `${fileName} was damaged (${damage}); ${copy === undefined ? "no copy could be made" : `a copy is kept at ${copy}`}, and ${kept}.`
            }
        ]);
        // Written back at once, so the next start does not report the same damage again.
        await library.#save().catch(() => undefined);
        return library;
    }

    /** The entries, most recently used first, each checked for its file; and the problems since the host started. */
    list(): ModelLibraryListing {
        const models = [...this.#models]
            .sort((a, b) => b.lastUsedAt.localeCompare(a.lastUsedAt))
            .map((model) => ({ ...model, missing: !isFile(model.path) }));
        return { models, problems: [...this.#problems] };
    }

    /**
     * Adds the model at `modelPath`, or refreshes its entry (facts, fingerprint, last used) when
     * the library has that path. `facts` saves a second header read when the caller has them.
     * Rejects with the inspection's error for a file that is not a usable GGUF.
     */
    async remember(modelPath: string, origin: LibraryOrigin, facts?: ModelFacts): Promise<LibraryModel> {
        const resolved = path.resolve(modelPath);
        const read = facts ?? (await this.options.inspect(resolved));
        const fingerprint = modelFingerprint(resolved);
        const now = this.#now().toISOString();
        const existing = this.#models.find((model) => model.path === resolved);
        // Once Kvault downloaded a file it may delete it; opening it again does not change that.
        const kind: LibraryModelOrigin = existing?.origin === "downloaded" || origin.kind === "downloaded" ? "downloaded" : "opened";
        const model: StoredModel = {
            id: existing?.id ?? crypto.randomUUID(),
            path: resolved,
            fileName: path.basename(resolved),
            origin: kind,
            source: origin.kind === "downloaded" ? origin.source : existing?.source,
            name: read.name,
            architecture: read.architecture,
            parameterCount: read.parameterCount,
            fileType: read.fileType,
            trainContextSize: read.trainContextSize,
            numLayers: read.numLayers,
            kvBytesPerToken: read.kvBytesPerToken,
            fileBytes: read.fileBytes,
            fingerprint,
            addedAt: existing?.addedAt ?? now,
            lastUsedAt: now
        };
        const index = this.#models.findIndex((entry) => entry.path === resolved);
        if (index === -1) {
            this.#models.push(model);
        } else {
            this.#models[index] = model;
        }
        await this.#save();
        return { ...model, missing: !isFile(resolved) };
    }

    /**
     * Removes an entry; with `deleteFile`, also the file, which only a downloaded model's may be
     * and never the one the engine runs. Rejects with library_model_unknown, library_file_not_owned
     * or library_model_in_use, changing nothing.
     */
    async forget(id: string, deleteFile = false): Promise<ModelLibraryListing> {
        const model = this.#models.find((entry) => entry.id === id);
        if (model === undefined) {
            throw new LibraryModelUnknownError(
                `No model in the library has the id ${JSON.stringify(id.slice(0, 60))}; listModels names them.`
            );
        }
        if (deleteFile) {
            if (model.origin !== "downloaded") {
                throw new LibraryFileNotOwnedError(
                    `Kvault deletes only files it downloaded; ${model.path} was opened from your disk, so it stays. Forget it without deleting the file, and delete the file yourself if you want it gone.`
                );
            }
            const foreign = this.options.foreignRoots ?? appRoots(defaultModelRoots());
            if (isUnderRoot(model.path, foreign)) {
                throw new LibraryFileNotOwnedError(
                    `${model.path} is in another app's model folder (LM Studio's, Ollama's or Hugging Face's), which Kvault uses in place and never deletes. Forget it without deleting the file; delete it from that app if you want it gone.`
                );
            }
            if (this.options.isLoaded?.(model.path) === true) {
                throw new LibraryModelInUseError(
                    `${model.fileName} is the model the engine runs now; load another model first, then delete it.`
                );
            }
            await fsPromises.rm(model.path, { force: true });
        }
        this.#models.splice(this.#models.indexOf(model), 1);
        await this.#save();
        return this.list();
    }

    /** Waits for the writes asked for so far; for the host's shutdown and tests. */
    async flush(): Promise<void> {
        await this.#writes.catch(() => undefined);
    }

    /** Writes the library as it is now, after the writes before it; rejects if this one fails. */
    #save(): Promise<void> {
        const text = `${JSON.stringify({ version: LIBRARY_VERSION, models: this.#models }, null, 2)}\n`;
        const write = this.#writes.catch(() => undefined).then(() => writeFileAtomic(this.options.filePath, text));
        this.#writes = write;
        return write;
    }
}

/** The entries that could be read, and what was wrong with the rest (undefined when nothing was). */
function parseLibrary(text: string): { models: StoredModel[]; damage: string | undefined } {
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch (error) {
        return { models: [], damage: `not JSON: ${(error as Error).message}` };
    }
    if (!isRecord(value)) {
        return { models: [], damage: "not a JSON object" };
    }
    const { version, models } = value;
    if (version !== LIBRARY_VERSION) {
        return { models: [], damage: `format version ${JSON.stringify(version)}, where this Kvault reads ${LIBRARY_VERSION}` };
    }
    if (!Array.isArray(models)) {
        return { models: [], damage: "no models list" };
    }
    const read: StoredModel[] = [];
    const unreadable: number[] = [];
    const seen = new Set<string>();
    models.forEach((entry: unknown, index) => {
        const model = readStoredModel(entry);
        if (model === undefined || seen.has(model.id) || read.some((other) => other.path === model.path)) {
            unreadable.push(index + 1);
        } else {
            seen.add(model.id);
            read.push(model);
        }
    });
    if (unreadable.length === 0) {
        return { models: read, damage: undefined };
    }
    return {
        models: read,
        damage: `${unreadable.length === 1 ? "entry" : "entries"} ${unreadable.slice(0, 10).join(", ")}${unreadable.length > 10 ? ", …" : ""} could not be read`
    };
}

function isFile(filePath: string): boolean {
    try {
        return fs.statSync(filePath).isFile();
    } catch {
        return false;
    }
}
