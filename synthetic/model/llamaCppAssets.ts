import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { KvaultError } from "../../engine/core/KvaultError.js";

/**
 * Files of the llama.cpp source node-llama-cpp ships, as a git bundle (node-llama-cpp's
 * `llama/gitRelease.bundle`, in the npm package, so `npm ci` on a clean clone has it): the real
 * tokenizers as vocabulary-only GGUFs (`models/ggml-vocab-*.gguf`) and real chat templates
 * (`models/templates/*.jinja`). The family presets read them from here, so every machine writes
 * the same models from the same llama.cpp commit that runs them.
 *
 * The bundle is a packed repository: a file comes out of it with git (`git clone` of the bundle
 * into a bare cache repository, then `git cat-file blob`), once per llama.cpp commit. Extracted
 * files are kept in `.cache/llama.cpp-assets/<commit>/` under the repository root.
 */
export class LlamaCppAssetError extends KvaultError {
    readonly code = "llama_cpp_asset_unavailable";
}

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const defaultCacheDirectory = path.join(repositoryRoot, ".cache", "llama.cpp-assets");
/** A blob as large as the biggest vocabulary (262k tokens and 514k merges: 16 MB) with room to spare. */
const MAX_ASSET_BYTES = 256 << 20;

/** node-llama-cpp's package folder, found through Node's own resolution (its exports hide package.json). */
function nodeLlamaCppDirectory(): string {
    let directory = path.dirname(createRequire(import.meta.url).resolve("node-llama-cpp"));
    for (let depth = 0; depth < 8; depth++) {
        const manifest = path.join(directory, "package.json");
        if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, "utf8")) as { name?: unknown }).name === "node-llama-cpp") {
            return directory;
        }
        directory = path.dirname(directory);
    }
    throw new LlamaCppAssetError("node-llama-cpp's package folder was not found above its entry point. Run npm ci.");
}

/** The bundle and the commit it holds, read from the bundle's text header ("# v2 git bundle", then "<sha> HEAD"). */
export function llamaCppBundle(): { readonly path: string; readonly commit: string } {
    const bundlePath = path.join(nodeLlamaCppDirectory(), "llama", "gitRelease.bundle");
    let head: string;
    try {
        const fd = fs.openSync(bundlePath, "r");
        try {
            const buffer = Buffer.alloc(4096);
            head = buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, 0)).toString("latin1");
        } finally {
            fs.closeSync(fd);
        }
    } catch (error) {
        throw new LlamaCppAssetError(
            `node-llama-cpp's llama.cpp source (${bundlePath}) cannot be read: ${(error as Error).message}. Run npm ci to restore it.`,
            { cause: error }
        );
    }
    const match = /^# v[23] git bundle\n(?:@[^\n]*\n)*([0-9a-f]{40}) HEAD\n/.exec(head);
    if (match === null) {
        throw new LlamaCppAssetError(
            `${bundlePath} is not the git bundle node-llama-cpp ships (no "<commit> HEAD" line). Run npm ci to restore it.`
        );
    }
    return { path: bundlePath, commit: match[1]! };
}

function git(args: readonly string[]): Buffer {
    return execFileSync("git", args, { maxBuffer: MAX_ASSET_BYTES, stdio: ["ignore", "pipe", "pipe"] });
}

function explainGitFailure(error: unknown, what: string): LlamaCppAssetError {
    const failure = error as NodeJS.ErrnoException & { stderr?: Buffer };
    if (failure.code === "ENOENT") {
        return new LlamaCppAssetError(
            `Cannot ${what} from node-llama-cpp's llama.cpp bundle: git is not installed. The family presets need git to read it; ` +
                "install git, or use the tiny, small or 1b presets, which need nothing.",
            { cause: error }
        );
    }
    const reason = failure.stderr?.toString().trim() || failure.message;
    return new LlamaCppAssetError(
        `Cannot ${what} from node-llama-cpp's llama.cpp bundle: ${reason}. Run npm ci to restore node-llama-cpp; ` +
            "if a newer llama.cpp no longer has the file, the family presets (synthetic/model/) name another.",
        { cause: error }
    );
}

/** A bare repository of the bundle in the cache, cloned once; concurrent first uses each clone and the first rename wins. */
function bundleRepository(cacheDirectory: string, bundle: { path: string; commit: string }): string {
    const repository = path.join(cacheDirectory, `${bundle.commit}.git`);
    if (fs.existsSync(path.join(repository, "HEAD"))) {
        return repository;
    }
    fs.mkdirSync(cacheDirectory, { recursive: true });
    const partial = `${repository}.${process.pid}.partial`;
    fs.rmSync(partial, { recursive: true, force: true });
    try {
        git(["clone", "--bare", "--quiet", bundle.path, partial]);
        fs.renameSync(partial, repository);
    } catch (error) {
        fs.rmSync(partial, { recursive: true, force: true });
        if (fs.existsSync(path.join(repository, "HEAD"))) {
            return repository; // another process finished first
        }
        throw explainGitFailure(error, "clone the llama.cpp source");
    }
    return repository;
}

/**
 * The path of `relativePath` (as in the llama.cpp repository, e.g. "models/ggml-vocab-qwen2.gguf")
 * extracted from node-llama-cpp's bundle into the cache, extracting it on first use.
 */
export function llamaCppAsset(relativePath: string, cacheDirectory = defaultCacheDirectory): string {
    const bundle = llamaCppBundle();
    const assetPath = path.join(cacheDirectory, bundle.commit, relativePath);
    if (fs.existsSync(assetPath)) {
        return assetPath;
    }
    const repository = bundleRepository(cacheDirectory, bundle);
    let bytes: Buffer;
    try {
        bytes = git([`--git-dir=${repository}`, "cat-file", "blob", `${bundle.commit}:${relativePath}`]);
    } catch (error) {
        throw explainGitFailure(error, `read ${relativePath} (llama.cpp ${bundle.commit.slice(0, 12)})`);
    }
    fs.mkdirSync(path.dirname(assetPath), { recursive: true });
    const partial = `${assetPath}.${process.pid}.partial`;
    fs.writeFileSync(partial, bytes);
    fs.renameSync(partial, assetPath);
    return assetPath;
}
