// Where other apps keep the GGUF files Kvault uses in place (host/models/findModelsOnDisk.ts):
// LM Studio's models folder, Ollama's store, Hugging Face's hub cache, and the folders the user adds.
import os from "node:os";
import path from "node:path";

/** The folders scanned for models, by the app that lays them out. */
export interface ModelRoots {
    /** `<root>/<publisher>/<model>/*.gguf`. */
    readonly lmStudio: readonly string[];
    /** `<root>/manifests/<registry>/<namespace>/<model>/<tag>` naming `<root>/blobs/sha256-<hex>`. */
    readonly ollama: readonly string[];
    /** `<root>/models--<org>--<name>/snapshots/<revision>/*.gguf`. */
    readonly huggingFace: readonly string[];
    /** The user's own folders: every `.gguf` under them. */
    readonly folders: readonly string[];
}

/**
 * The apps' default folders under `home`, moved where their own variables move them
 * (OLLAMA_MODELS; HF_HUB_CACHE, else HF_HOME/hub), and the user's `folders`.
 * Tests pass a temporary home and environment; nothing here reads the disk.
 */
export function modelRootsFor(home: string, env: NodeJS.ProcessEnv, folders: readonly string[] = []): ModelRoots {
    const given = (value: string | undefined): string | undefined => (value === undefined || value === "" ? undefined : value);
    const hfHome = given(env.HF_HOME) ?? path.join(home, ".cache", "huggingface");
    return {
        lmStudio: [path.join(home, ".lmstudio", "models"), path.join(home, ".cache", "lm-studio", "models")],
        ollama: [given(env.OLLAMA_MODELS) ?? path.join(home, ".ollama", "models")],
        huggingFace: [given(env.HF_HUB_CACHE) ?? path.join(hfHome, "hub")],
        folders: folders.map((folder) => path.resolve(folder))
    };
}

/** This user's roots: the home directory and environment of the host process. */
export function defaultModelRoots(folders: readonly string[] = []): ModelRoots {
    return modelRootsFor(os.homedir(), process.env, folders);
}

/** The apps' roots, not the user's folders: where a file is another app's (ModelLibrary.forget never deletes one). */
export function appRoots(roots: ModelRoots): readonly string[] {
    return [...roots.lmStudio, ...roots.ollama, ...roots.huggingFace];
}

/** Whether `filePath` lies under one of `roots` (after resolving both). */
export function isUnderRoot(filePath: string, roots: readonly string[]): boolean {
    const resolved = path.resolve(filePath);
    return roots.some((root) => {
        const relative = path.relative(path.resolve(root), resolved);
        return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
    });
}
