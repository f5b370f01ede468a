import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTaggedGgufMetadata } from "../../../synthetic/gguf/taggedGgufMetadata.js";
import { llamaCppAsset, llamaCppBundle } from "../../../synthetic/model/llamaCppAssets.js";

describe("the llama.cpp files the family presets read, from node-llama-cpp's bundle", () => {
    let cache: string;
    beforeAll(() => {
        cache = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-llama-cpp-assets-"));
    });
    afterAll(() => {
        fs.rmSync(cache, { recursive: true, force: true });
    });

    it("names the commit the bundle holds, as git reads it", () => {
        const bundle = llamaCppBundle();
        expect(bundle.path).toMatch(/node-llama-cpp[\\/]llama[\\/]gitRelease\.bundle$/);
        const heads = execFileSync("git", ["bundle", "list-heads", bundle.path], { encoding: "utf8" });
        expect(heads).toContain(`${bundle.commit} HEAD`);
    });

    it("extracts a file into an empty cache, as on a clean clone, and reads it from the cache afterwards", () => {
        const commit = llamaCppBundle().commit;
        const vocabulary = llamaCppAsset("models/ggml-vocab-phi-3.gguf", cache);
        expect(vocabulary).toBe(path.join(cache, commit, "models", "ggml-vocab-phi-3.gguf"));
        expect(readTaggedGgufMetadata(vocabulary).get("tokenizer.ggml.model")).toEqual({ type: "string", value: "llama" });
        expect(fs.readdirSync(cache).sort()).toEqual([commit, `${commit}.git`]);

        const modified = fs.statSync(vocabulary).mtimeMs;
        expect(llamaCppAsset("models/ggml-vocab-phi-3.gguf", cache)).toBe(vocabulary);
        expect(fs.statSync(vocabulary).mtimeMs).toBe(modified);
        expect(fs.readdirSync(path.join(cache, commit, "models")).filter((name) => name.includes("partial"))).toEqual([]);
    });

    it("refuses a file the bundle does not have, saying what and where", () => {
        expect(() => llamaCppAsset("models/ggml-vocab-nonexistent.gguf", cache)).toThrow(
            expect.objectContaining({
                code: "llama_cpp_asset_unavailable",
                message: expect.stringMatching(
                    /^Cannot read models\/ggml-vocab-nonexistent\.gguf \(llama\.cpp [0-9a-f]{12}\) from node-llama-cpp's llama\.cpp bundle: .+\. Run npm ci to restore node-llama-cpp; if a newer llama\.cpp no longer has the file/
                )
            })
        );
    });

    it("says git is needed when there is none", () => {
        const noGitCache = fs.mkdtempSync(path.join(cache, "no-git-"));
        const savedPath = process.env.PATH;
        process.env.PATH = path.join(cache, "empty-bin");
        try {
            expect(() => llamaCppAsset("models/ggml-vocab-qwen2.gguf", noGitCache)).toThrow(
                /: git is not installed\. The family presets need git/
            );
        } finally {
            process.env.PATH = savedPath;
        }
    });
});
