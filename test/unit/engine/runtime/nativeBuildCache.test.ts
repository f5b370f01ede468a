import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildKey, nativeBuildCacheDirectory, restoreFromCache, storeInCache } from "../../../../engine/runtime/nativeBuildCache.js";

const temporary: string[] = [];
function temporaryDirectory(): string {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-build-cache-"));
    temporary.push(directory);
    return directory;
}
afterEach(() => {
    for (const directory of temporary.splice(0)) {
        fs.rmSync(directory, { recursive: true, force: true });
    }
});

describe("nativeBuildCacheDirectory", () => {
    it("is outside the checkout: KVAULT_BUILD_CACHE, else XDG_CACHE_HOME/kvault, else ~/.cache/kvault", () => {
        expect(nativeBuildCacheDirectory({ KVAULT_BUILD_CACHE: "/srv/cache" })).toBe("/srv/cache");
        expect(nativeBuildCacheDirectory({ XDG_CACHE_HOME: "/home/u/.xdg" })).toBe("/home/u/.xdg/kvault");
        expect(nativeBuildCacheDirectory({})).toBe(path.join(os.homedir(), ".cache", "kvault"));
    });
});

describe("buildKey", () => {
    it("changes with any part and with where parts are cut", () => {
        const key = buildKey(["v0.4.0", "GGML_NATIVE=ON", "g++ 12.2"]);
        expect(buildKey(["v0.4.0", "GGML_NATIVE=ON", "g++ 12.2"])).toBe(key);
        expect(buildKey(["v0.4.1", "GGML_NATIVE=ON", "g++ 12.2"])).not.toBe(key);
        expect(buildKey(["v0.4.0", "GGML_NATIVE=ON", "g++ 13.1"])).not.toBe(key);
        expect(buildKey(["ab", "c"])).not.toBe(buildKey(["a", "bc"]));
    });
});

describe("storeInCache and restoreFromCache", () => {
    it("copy a build folder into the cache and back, whole", () => {
        const cache = temporaryDirectory();
        const build = path.join(temporaryDirectory(), "linux-x64-abc");
        fs.mkdirSync(path.join(build, "Release"), { recursive: true });
        fs.writeFileSync(path.join(build, "Release", "llama-addon.node"), "binary");
        fs.writeFileSync(path.join(build, "buildDone.status"), "");

        storeInCache(build, path.join("node-llama-cpp", "key1", "linux-x64-abc"), cache);
        const target = path.join(temporaryDirectory(), "localBuilds", "linux-x64-abc");
        expect(restoreFromCache(path.join("node-llama-cpp", "key1", "linux-x64-abc"), target, cache)).toBe(true);

        expect(fs.readFileSync(path.join(target, "Release", "llama-addon.node"), "utf8")).toBe("binary");
        expect(fs.existsSync(path.join(target, "buildDone.status"))).toBe(true);
        expect(fs.readdirSync(path.dirname(target))).toEqual(["linux-x64-abc"]); // no staging folder left
    });

    it("restore nothing for a key the cache does not have", () => {
        const cache = temporaryDirectory();
        const target = path.join(temporaryDirectory(), "linux-x64-abc");
        expect(restoreFromCache(path.join("node-llama-cpp", "missing", "linux-x64-abc"), target, cache)).toBe(false);
        expect(fs.existsSync(target)).toBe(false);
    });
});
