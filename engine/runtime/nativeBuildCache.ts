import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Native builds (Kvault's local build of node-llama-cpp's binary, the peer's llama-server) kept outside
 * the checkout, so that `npm ci` (which empties node_modules) and a fresh clone of the same project
 * reuse them instead of compiling llama.cpp again. An entry's folder is named by a hash of everything
 * that decides the binary: the source's release, the options, the patch, the compiler. Nothing here is
 * read by the shipped app: only `npm run build-llama` and the tests' setup use it.
 *
 * `KVAULT_BUILD_CACHE` moves it; the default is `$XDG_CACHE_HOME/kvault` or `~/.cache/kvault`.
 */
export function nativeBuildCacheDirectory(environment: NodeJS.ProcessEnv = process.env): string {
    const configured = environment.KVAULT_BUILD_CACHE;
    if (configured !== undefined && configured !== "") {
        return path.resolve(configured);
    }
    const base =
        environment.XDG_CACHE_HOME !== undefined && environment.XDG_CACHE_HOME !== ""
            ? environment.XDG_CACHE_HOME
            : path.join(os.homedir(), ".cache");
    return path.join(base, "kvault");
}

/** A short, stable key for what decides a build's output. */
export function buildKey(parts: readonly string[]): string {
    const hash = createHash("sha256");
    for (const part of parts) {
        hash.update(`${part.length}:${part}`);
    }
    return hash.digest("hex").slice(0, 16);
}

/** The C++ compiler's own version line, part of a key: another compiler makes another binary. */
export function compilerVersion(): string {
    const result = spawnSync("c++", ["--version"], { encoding: "utf8" });
    return result.status === 0 ? (result.stdout.split("\n")[0] ?? "") : "no c++";
}

/** The contents of every file in `directory` (not recursive), in name order, as key parts. */
export function directoryContents(directory: string): string[] {
    return readdirSync(directory)
        .sort()
        .map((name) => `${name}\n${readFileSync(path.join(directory, name), "utf8")}`);
}

/**
 * Copies `source` into the cache as `entry` (a relative path), whole or not at all: see copyWhole.
 */
export function storeInCache(source: string, entry: string, cache: string = nativeBuildCacheDirectory()): string {
    const target = path.join(cache, entry);
    copyWhole(source, target);
    return target;
}

/** Copies a cached `entry` to `target` when the cache has it; returns whether it did. */
export function restoreFromCache(entry: string, target: string, cache: string = nativeBuildCacheDirectory()): boolean {
    const source = path.join(cache, entry);
    if (!existsSync(source)) {
        return false;
    }
    copyWhole(source, target);
    return true;
}

/** Copies beside `target` and renames into it, so a copy interrupted midway never looks finished. */
function copyWhole(source: string, target: string): void {
    const staging = `${target}.${process.pid}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(path.dirname(target), { recursive: true });
    cpSync(source, staging, { recursive: true, verbatimSymlinks: true });
    rmSync(target, { recursive: true, force: true });
    renameSync(staging, target);
}
