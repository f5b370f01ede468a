// The GGUF files other apps already keep on this disk, found where they lay them out
// (host/models/modelRoots.ts) and named as they name them, so that Kvault runs them in place:
// never copied, never deleted. The scan is bounded in depth, entries and bytes read.
import type { Dirent } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { fileIdentity, type FileIdentity } from "./fileIdentity.js";
import type { ModelRoots } from "./modelRoots.js";

/** Which app's layout a model was found in; "folder" for a folder the user added. */
export type DiskModelSource = "lmstudio" | "ollama" | "huggingface" | "folder";

export interface DiskModel {
    /**
     * The name its app shows: LM Studio `publisher/model/file.gguf`, Ollama `qwen3:0.6b`
     * (`namespace/model:tag` outside `library`, `host/namespace/model:tag` off Ollama's registry),
     * Hugging Face `org/name/file.gguf`, a user's folder the file's name without `.gguf`.
     */
    readonly id: string;
    /** The file Kvault loads, where the app keeps it. */
    readonly path: string;
    readonly source: DiskModelSource;
    /** The file as it was found; a load refuses it if it changed since (fileIdentity.ts). */
    readonly identity: FileIdentity;
}

export const diskScanLimits = {
    /** Folders below a root a scan descends (LM Studio needs 2, Hugging Face's snapshots 3 and their subfolders). */
    maxDepth: 6,
    /** Directory entries read in one scan, over every root; a scan that reaches it stops and says so. */
    maxEntries: 20_000,
    /** Models one scan lists. */
    maxModels: 1_000,
    /** An Ollama manifest is a few hundred bytes of JSON; a larger file is not one. */
    maxManifestBytes: 64 * 1024
} as const;

export type DiskScanLimits = { readonly [K in keyof typeof diskScanLimits]: number };

export interface DiskScan {
    /** Each name once: the first root that has it wins. */
    readonly models: readonly DiskModel[];
    /** Why the scan stopped early, when it did (a limit reached); undefined when it saw everything. */
    readonly truncated: string | undefined;
}

const GGUF_MAGIC = Buffer.from("GGUF");
const OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model";
const OLLAMA_REGISTRY = "registry.ollama.ai";
/** The second and later parts of a split GGUF (`…-00002-of-00003.gguf`): llama.cpp loads them through the first. */
const SPLIT_PART = /-(\d+)-of-\d+\.gguf$/i;

/** Finds the models under `roots`; a root that does not exist is skipped, one that cannot be read likewise. */
export async function findModelsOnDisk(roots: ModelRoots, limits: DiskScanLimits = diskScanLimits): Promise<DiskScan> {
    const scan = new Scan(limits);
    for (const root of roots.lmStudio) {
        await scan.ggufFiles(root, "lmstudio", (relative) =>
            relative.split(path.sep).length === 3 ? relative.split(path.sep).join("/") : undefined
        );
    }
    for (const root of roots.ollama) {
        await scan.ollama(root);
    }
    for (const root of roots.huggingFace) {
        await scan.huggingFace(root);
    }
    for (const root of roots.folders) {
        await scan.ggufFiles(root, "folder", (relative) => path.basename(relative).replace(/\.gguf$/i, ""));
    }
    return { models: scan.models, truncated: scan.truncated };
}

class Scan {
    readonly models: DiskModel[] = [];
    truncated: string | undefined;
    #entries = 0;

    constructor(private readonly limits: DiskScanLimits) {}

    /** Every GGUF under `root`, named by `nameOf(relative path)` (undefined: not laid out as the app lays out its models). */
    async ggufFiles(root: string, source: DiskModelSource, nameOf: (relative: string) => string | undefined): Promise<void> {
        for (const file of await this.#walk(root, this.limits.maxDepth, isModelFile)) {
            const relative = path.relative(root, file);
            const id = nameOf(relative);
            if (id !== undefined) {
                await this.#add(id, file, source);
            }
        }
    }

    /** Ollama's manifests, `manifests/<registry>/<namespace>/<model>/<tag>`, each naming its model blob. */
    async ollama(root: string): Promise<void> {
        const manifests = path.join(root, "manifests");
        // a manifest's name is its tag, with no extension
        for (const file of await this.#walk(manifests, 4, () => true)) {
            const parts = path.relative(manifests, file).split(path.sep);
            if (parts.length !== 4) {
                continue;
            }
            const [registry, namespace, model, tag] = parts as [string, string, string, string];
            const digest = await readModelDigest(file, this.limits.maxManifestBytes);
            if (digest === undefined) {
                continue;
            }
            const prefix = registry === OLLAMA_REGISTRY ? (namespace === "library" ? "" : `${namespace}/`) : `${registry}/${namespace}/`;
            await this.#add(`${prefix}${model}:${tag}`, path.join(root, "blobs", digest.replace(":", "-")), "ollama");
        }
    }

    /** Hugging Face's hub cache: each `models--<org>--<name>` repository's snapshot that `refs/main` names, else every snapshot. */
    async huggingFace(root: string): Promise<void> {
        for (const repository of await this.#list(root)) {
            const match = /^models--([^-].*?)--(.+)$/.exec(repository);
            if (match === null) {
                continue;
            }
            const [, org, name] = match as unknown as [string, string, string];
            const snapshots = path.join(root, repository, "snapshots");
            const main = await fs.readFile(path.join(root, repository, "refs", "main"), "utf8").then(
                (text) => text.trim(),
                () => undefined
            );
            const revisions = main !== undefined && /^[0-9a-f]{6,64}$/i.test(main) ? [main] : await this.#list(snapshots);
            for (const revision of revisions) {
                const snapshot = path.join(snapshots, revision);
                for (const file of await this.#walk(snapshot, this.limits.maxDepth - 3, isModelFile)) {
                    await this.#add(`${org}/${name}/${path.relative(snapshot, file).split(path.sep).join("/")}`, file, "huggingface");
                }
            }
        }
    }

    /** Files under `directory` that `wanted` takes by name, at most `maxDepth` folders down, depth-first in name order. */
    async #walk(directory: string, maxDepth: number, wanted: (name: string) => boolean): Promise<string[]> {
        const found: string[] = [];
        const visit = async (folder: string, depth: number): Promise<void> => {
            let entries: Dirent[];
            try {
                entries = await fs.readdir(folder, { withFileTypes: true });
            } catch {
                return;
            }
            entries.sort((a, b) => a.name.localeCompare(b.name));
            for (const entry of entries) {
                if (!this.#count()) {
                    return;
                }
                const full = path.join(folder, entry.name);
                // a symbolic link is followed for a file (Hugging Face's snapshots link into blobs), never for a folder (no loops)
                if (entry.isDirectory() && depth < maxDepth) {
                    await visit(full, depth + 1);
                } else if ((entry.isFile() || entry.isSymbolicLink()) && wanted(entry.name)) {
                    found.push(full);
                }
            }
        };
        await visit(directory, 1);
        return found;
    }

    async #list(directory: string): Promise<string[]> {
        try {
            const names = (await fs.readdir(directory)).sort();
            return names.filter(() => this.#count());
        } catch {
            return [];
        }
    }

    /** Counts one directory entry; false once the scan has read its limit. */
    #count(): boolean {
        if (this.#entries >= this.limits.maxEntries) {
            this.truncated ??= `the scan stopped after ${this.limits.maxEntries.toLocaleString("en-US")} folder entries; models beyond them are not listed`;
            return false;
        }
        this.#entries++;
        return true;
    }

    async #add(id: string, file: string, source: DiskModelSource): Promise<void> {
        if (this.models.some((model) => model.id === id)) {
            return;
        }
        if (this.models.length >= this.limits.maxModels) {
            this.truncated ??= `the scan lists at most ${this.limits.maxModels.toLocaleString("en-US")} models`;
            return;
        }
        const identity = fileIdentity(file);
        if (identity !== undefined && (await startsWithGguf(file))) {
            this.models.push({ id, path: file, source, identity });
        }
    }
}

/** A `.gguf` file that is a model's first (or only) part, not a vision projector LM Studio keeps beside it. */
function isModelFile(name: string): boolean {
    const part = SPLIT_PART.exec(name)?.[1];
    return /\.gguf$/i.test(name) && (part === undefined || Number(part) === 1) && !/^mmproj/i.test(name);
}

/** The digest of a manifest's model layer (`sha256:<hex>`); undefined for a file that is not such a manifest. */
async function readModelDigest(file: string, maxBytes: number): Promise<string | undefined> {
    try {
        const stat = await fs.stat(file);
        if (stat.size > maxBytes) {
            return undefined;
        }
        const manifest = JSON.parse(await fs.readFile(file, "utf8")) as { layers?: { mediaType?: unknown; digest?: unknown }[] };
        const layer = Array.isArray(manifest.layers) ? manifest.layers.find((entry) => entry.mediaType === OLLAMA_MODEL_LAYER) : undefined;
        return typeof layer?.digest === "string" && /^sha256:[0-9a-f]{64}$/.test(layer.digest) ? layer.digest : undefined;
    } catch {
        return undefined;
    }
}

async function startsWithGguf(file: string): Promise<boolean> {
    try {
        const handle = await fs.open(file, "r");
        try {
            const head = Buffer.alloc(4);
            await handle.read(head, 0, 4, 0);
            return head.equals(GGUF_MAGIC);
        } finally {
            await handle.close();
        }
    } catch {
        return false;
    }
}
