import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelFacts } from "../../../../contract/models.js";
import { modelFingerprint } from "../../../../engine/model/modelFingerprint.js";
import { ModelLibrary, type ModelLibraryOptions } from "../../../../host/models/ModelLibrary.js";
import { appRoots, modelRootsFor } from "../../../../host/models/modelRoots.js";

let directory = "";
let libraryFile = "";
let clock = 0;
const inspected: string[] = [];

/** What the engine's inspectModel would say; the files here are not GGUF, the library only reads their bytes for the fingerprint. */
function facts(modelPath: string): ModelFacts {
    return {
        path: modelPath,
        fileName: path.basename(modelPath),
        fileBytes: fs.statSync(modelPath).size,
        name: "Test model",
        architecture: "llama",
        parameterCount: 1_100_000,
        fileType: "MOSTLY_Q4_K_M",
        trainContextSize: 4096,
        numLayers: 2,
        kvBytesPerToken: 1024,
        kvBytesPerTokenByType: { f16: 1024, q8_0: 544, q4_0: 288 },
        heads: { numHeads: 4, numKvHeads: 2, kHeadSize: 32, vHeadSize: 32 },
        slidingWindow: undefined,
        machineRamBytes: 8 * 1024 ** 3,
        memory: { plainKvCache: true },
        estimate: undefined
    };
}

function options(extra: Partial<ModelLibraryOptions> = {}): ModelLibraryOptions {
    return {
        filePath: libraryFile,
        inspect: async (modelPath) => {
            inspected.push(modelPath);
            return facts(modelPath);
        },
        now: () => new Date(Date.UTC(2026, 0, 5, 10, 0, clock++)),
        ...extra
    };
}

function modelFile(name: string, bytes = 4096): string {
    const file = path.join(directory, name);
    fs.writeFileSync(file, Buffer.alloc(bytes, name.length));
    return file;
}

beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-library-"));
    libraryFile = path.join(directory, "models.json");
    inspected.length = 0;
    clock = 0;
});

afterEach(() => {
    fs.rmSync(directory, { recursive: true, force: true });
});

describe("ModelLibrary", () => {
    it("remembers an opened and a downloaded model with their facts and fingerprint, most recently used first", async () => {
        const library = await ModelLibrary.open(options());
        expect(library.list()).toEqual({ models: [], problems: [] });
        const opened = modelFile("opened.gguf");
        const downloaded = modelFile("downloaded.gguf", 8192);
        await library.remember(opened, { kind: "opened" });
        const given = facts(downloaded);
        await library.remember(downloaded, { kind: "downloaded", source: "https://example.com/downloaded.gguf" }, given);
        // Facts handed over are not read again.
        expect(inspected).toEqual([opened]);
        const { models } = library.list();
        expect(models.map((model) => model.fileName)).toEqual(["downloaded.gguf", "opened.gguf"]);
        expect(models[0]).toEqual({
            id: expect.any(String),
            path: downloaded,
            fileName: "downloaded.gguf",
            origin: "downloaded",
            source: "https://example.com/downloaded.gguf",
            name: "Test model",
            architecture: "llama",
            parameterCount: 1_100_000,
            fileType: "MOSTLY_Q4_K_M",
            trainContextSize: 4096,
            numLayers: 2,
            kvBytesPerToken: 1024,
            fileBytes: 8192,
            fingerprint: modelFingerprint(downloaded),
            addedAt: "2026-01-05T10:00:01.000Z",
            lastUsedAt: "2026-01-05T10:00:01.000Z",
            missing: false
        });
        expect(models[1]).toMatchObject({ origin: "opened", source: undefined, fingerprint: modelFingerprint(opened) });
        expect(models[0]!.fingerprint).not.toBe(models[1]!.fingerprint);

        // Using a model again keeps its id and when it was added, and moves it to the top.
        await library.remember(opened, { kind: "opened" });
        const again = library.list().models;
        expect(again.map((model) => model.fileName)).toEqual(["opened.gguf", "downloaded.gguf"]);
        expect(again[0]).toMatchObject({ id: models[1]!.id, addedAt: models[1]!.addedAt, lastUsedAt: "2026-01-05T10:00:02.000Z" });
        expect(library.list().models).toHaveLength(2);
    });

    it("persists across a new instance, writing atomically: no temporary file is left", async () => {
        const first = await ModelLibrary.open(options());
        const model = modelFile("kept.gguf");
        await first.remember(model, { kind: "opened" });
        expect(fs.readdirSync(directory).sort()).toEqual(["kept.gguf", "models.json"]);
        const stored = JSON.parse(fs.readFileSync(libraryFile, "utf8")) as { version: number; models: unknown[] };
        expect(stored.version).toBe(1);
        expect(stored.models).toHaveLength(1);
        const second = await ModelLibrary.open(options());
        expect(second.list()).toEqual(first.list());
    });

    it("lists a file gone from disk as missing, and keeps it", async () => {
        const library = await ModelLibrary.open(options());
        const model = modelFile("gone.gguf");
        await library.remember(model, { kind: "opened" });
        fs.rmSync(model);
        expect(library.list().models).toMatchObject([{ fileName: "gone.gguf", missing: true }]);
        expect((await ModelLibrary.open(options())).list().models).toMatchObject([{ fileName: "gone.gguf", missing: true }]);
    });

    it("forgets an entry and keeps the file; deletes a downloaded file only when asked, never an opened one or the loaded model", async () => {
        let loaded = "";
        const library = await ModelLibrary.open(options({ isLoaded: (modelPath) => modelPath === loaded }));
        const opened = modelFile("mine.gguf");
        const downloaded = modelFile("fetched.gguf");
        const openedEntry = await library.remember(opened, { kind: "opened" });
        const downloadedEntry = await library.remember(downloaded, { kind: "downloaded", source: "hf:owner/repo:Q4_K_M" });

        await expect(library.forget("nope")).rejects.toMatchObject({ code: "library_model_unknown" });
        await expect(library.forget(openedEntry.id, true)).rejects.toMatchObject({ code: "library_file_not_owned" });
        loaded = downloaded;
        await expect(library.forget(downloadedEntry.id, true)).rejects.toMatchObject({
            code: "library_model_in_use",
            message: "fetched.gguf is the model the engine runs now; load another model first, then delete it."
        });
        expect(library.list().models).toHaveLength(2);

        expect((await library.forget(openedEntry.id)).models.map((model) => model.id)).toEqual([downloadedEntry.id]);
        expect(fs.existsSync(opened)).toBe(true);
        loaded = "";
        expect((await library.forget(downloadedEntry.id, true)).models).toEqual([]);
        expect(fs.existsSync(downloaded)).toBe(false);
        expect((await ModelLibrary.open(options())).list().models).toEqual([]);
    });

    it("a corrupt models.json is kept as a copy, the library starts empty, and the problem is reported once", async () => {
        fs.writeFileSync(libraryFile, '{"version": 1, "models": [');
        const library = await ModelLibrary.open(options());
        const { models, problems } = library.list();
        expect(models).toEqual([]);
        expect(problems).toHaveLength(1);
        const copy = problems[0]!.copy!;
        expect(path.basename(copy)).toMatch(/^models\.json\.corrupt-2026-01-05T10-00-00-000Z$/);
        expect(fs.readFileSync(copy, "utf8")).toBe('{"version": 1, "models": [');
        expect(problems[0]).toEqual({
            code: "library_corrupt",
            copy,
            message: expect.stringMatching(
                /^models\.json was damaged \(not JSON: .+\); a copy is kept at .+models\.json\.corrupt-.+, and the library starts empty\.$/
            )
        });
        // It still works, and the next start finds a good file.
        await library.remember(modelFile("after.gguf"), { kind: "opened" });
        expect((await ModelLibrary.open(options())).list()).toMatchObject({ models: [{ fileName: "after.gguf" }], problems: [] });
    });

    it("keeps the readable entries of a damaged file, and sets aside one from a newer Kvault", async () => {
        const library = await ModelLibrary.open(options());
        await library.remember(modelFile("good.gguf"), { kind: "opened" });
        const stored = JSON.parse(fs.readFileSync(libraryFile, "utf8")) as { models: unknown[] };
        fs.writeFileSync(libraryFile, JSON.stringify({ version: 1, models: [...stored.models, { id: "x", path: "relative.gguf" }] }));
        const reopened = await ModelLibrary.open(options());
        expect(reopened.list().models.map((model) => model.fileName)).toEqual(["good.gguf"]);
        expect(reopened.list().problems[0]!.message).toMatch(
            /^models\.json was damaged \(entry 2 could not be read\); a copy is kept at .+, and the 1 readable entry was kept\.$/
        );

        fs.writeFileSync(libraryFile, JSON.stringify({ version: 2, models: [] }));
        const newer = await ModelLibrary.open(options());
        expect(newer.list().models).toEqual([]);
        expect(newer.list().problems[0]!.message).toMatch(/^models\.json was damaged \(format version 2, where this Kvault reads 1\)/);
        expect(fs.readdirSync(directory).filter((name) => name.includes(".corrupt-"))).toHaveLength(2);
    });

    it("a file that is not a usable model is refused with the inspection's error, and not remembered", async () => {
        const library = await ModelLibrary.open(
            options({ inspect: () => Promise.reject(Object.assign(new Error("not a GGUF file"), { code: "model_not_gguf" })) })
        );
        await expect(library.remember(modelFile("bad.gguf"), { kind: "opened" })).rejects.toMatchObject({ code: "model_not_gguf" });
        expect(library.list().models).toEqual([]);
        expect(fs.existsSync(libraryFile)).toBe(false);
    });
});

describe("ModelLibrary and other apps' model folders", () => {
    it("never deletes a file in LM Studio's, Ollama's or Hugging Face's folder, even one its entry says Kvault downloaded", async () => {
        const home = path.join(directory, "home");
        const roots = modelRootsFor(home, {});
        const ollamaBlob = path.join(home, ".ollama", "models", "blobs", `sha256-${"a".repeat(64)}`);
        fs.mkdirSync(path.dirname(ollamaBlob), { recursive: true });
        fs.writeFileSync(ollamaBlob, Buffer.alloc(4096, 1));
        const library = await ModelLibrary.open(options({ foreignRoots: appRoots(roots) }));
        const entry = await library.remember(ollamaBlob, { kind: "downloaded", source: "hf:org/repo/model.gguf" });

        await expect(library.forget(entry.id, true)).rejects.toMatchObject({
            code: "library_file_not_owned",
            message: expect.stringContaining("is in another app's model folder")
        });
        expect(fs.existsSync(ollamaBlob)).toBe(true);
        expect((await library.forget(entry.id)).models).toEqual([]);
        expect(fs.existsSync(ollamaBlob)).toBe(true);
    });
});
