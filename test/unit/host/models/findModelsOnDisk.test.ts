import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { diskScanLimits, findModelsOnDisk } from "../../../../host/models/findModelsOnDisk.js";
import { modelRootsFor } from "../../../../host/models/modelRoots.js";
import { checkUnchanged, fileIdentity } from "../../../../host/models/fileIdentity.js";

const homes: string[] = [];
afterEach(() => {
    for (const home of homes.splice(0)) {
        fs.rmSync(home, { recursive: true, force: true });
    }
});

function tempHome(): string {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-disk-models-"));
    homes.push(home);
    return home;
}

/** A file that starts as a GGUF does; the scan reads no further. */
function writeGguf(file: string, body = "model"): string {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Buffer.concat([Buffer.from("GGUF"), Buffer.from(body)]));
    return file;
}

/** Ollama's layout: the blob named by its digest, and a manifest whose model layer names it. */
function writeOllamaModel(root: string, registry: string, namespace: string, model: string, tag: string): string {
    const content = Buffer.from(`GGUF${namespace}/${model}:${tag}`);
    const hex = crypto.createHash("sha256").update(content).digest("hex");
    const blob = path.join(root, "blobs", `sha256-${hex}`);
    fs.mkdirSync(path.dirname(blob), { recursive: true });
    fs.writeFileSync(blob, content);
    const manifest = path.join(root, "manifests", registry, namespace, model, tag);
    fs.mkdirSync(path.dirname(manifest), { recursive: true });
    fs.writeFileSync(
        manifest,
        JSON.stringify({
            schemaVersion: 2,
            layers: [
                { mediaType: "application/vnd.ollama.image.template", digest: `sha256:${"0".repeat(64)}`, size: 10 },
                { mediaType: "application/vnd.ollama.image.model", digest: `sha256:${hex}`, size: content.length }
            ]
        })
    );
    return blob;
}

describe("findModelsOnDisk: the GGUF files other apps keep, named as those apps name them", () => {
    it("finds LM Studio's, Ollama's, Hugging Face's and a user folder's models under a home, and nothing else", async () => {
        const home = tempHome();
        const lmStudio = writeGguf(path.join(home, ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M.gguf"));
        writeGguf(path.join(home, ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/mmproj-Qwen3-F16.gguf"));
        writeGguf(path.join(home, ".lmstudio/models/loose.gguf")); // not <publisher>/<model>/<file>
        const split = writeGguf(path.join(home, ".cache/lm-studio/models/bartowski/Big-GGUF/Big-Q4-00001-of-00002.gguf"));
        writeGguf(path.join(home, ".cache/lm-studio/models/bartowski/Big-GGUF/Big-Q4-00002-of-00002.gguf"));
        const ollama = writeOllamaModel(path.join(home, ".ollama/models"), "registry.ollama.ai", "library", "qwen3", "0.6b");
        const ollamaUser = writeOllamaModel(path.join(home, ".ollama/models"), "registry.ollama.ai", "someone", "tiny", "latest");
        const ollamaHf = writeOllamaModel(path.join(home, ".ollama/models"), "hf.co", "org", "repo", "Q4_K_M");
        const hubRepo = path.join(home, ".cache/huggingface/hub/models--Qwen--Qwen3-0.6B-GGUF");
        const blob = writeGguf(path.join(hubRepo, "blobs", "abc123"));
        fs.mkdirSync(path.join(hubRepo, "snapshots", "0123abcd"), { recursive: true });
        fs.symlinkSync(blob, path.join(hubRepo, "snapshots", "0123abcd", "Qwen3-0.6B-Q8_0.gguf"));
        writeGguf(path.join(hubRepo, "snapshots", "99999999", "Old-Revision.gguf"));
        fs.mkdirSync(path.join(hubRepo, "refs"), { recursive: true });
        fs.writeFileSync(path.join(hubRepo, "refs", "main"), "0123abcd");
        const folder = path.join(home, "my-models");
        const own = writeGguf(path.join(folder, "nested", "mine.gguf"));
        fs.writeFileSync(path.join(folder, "notes.gguf"), "not a model");

        const scan = await findModelsOnDisk(modelRootsFor(home, {}, [folder]));

        expect(scan.truncated).toBeUndefined();
        expect(scan.models.map(({ id, path: file, source }) => ({ id, file, source }))).toEqual([
            { id: "lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M.gguf", file: lmStudio, source: "lmstudio" },
            { id: "bartowski/Big-GGUF/Big-Q4-00001-of-00002.gguf", file: split, source: "lmstudio" },
            { id: "hf.co/org/repo:Q4_K_M", file: ollamaHf, source: "ollama" },
            { id: "qwen3:0.6b", file: ollama, source: "ollama" },
            { id: "someone/tiny:latest", file: ollamaUser, source: "ollama" },
            {
                id: "Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf",
                file: path.join(hubRepo, "snapshots", "0123abcd", "Qwen3-0.6B-Q8_0.gguf"),
                source: "huggingface"
            },
            { id: "mine", file: own, source: "folder" }
        ]);
    });

    it("follows OLLAMA_MODELS, HF_HUB_CACHE and HF_HOME where the apps' users moved their stores", async () => {
        const home = tempHome();
        const ollamaRoot = path.join(home, "elsewhere", "ollama");
        const blob = writeOllamaModel(ollamaRoot, "registry.ollama.ai", "library", "llama3", "latest");
        const hfHome = path.join(home, "hf");
        const file = writeGguf(path.join(hfHome, "hub/models--org--name/snapshots/abcdef12/m.gguf"));

        const scan = await findModelsOnDisk(modelRootsFor(home, { OLLAMA_MODELS: ollamaRoot, HF_HOME: hfHome }));

        expect(scan.models.map(({ id, path: found }) => [id, found])).toEqual([
            ["llama3:latest", blob],
            ["org/name/m.gguf", file]
        ]);
    });

    it("stops at its entry limit and says so, listing what it saw", async () => {
        const home = tempHome();
        for (let index = 0; index < 12; index++) {
            writeGguf(path.join(home, "many", `m${String(index).padStart(2, "0")}.gguf`));
        }

        const scan = await findModelsOnDisk(modelRootsFor(home, {}, [path.join(home, "many")]), { ...diskScanLimits, maxEntries: 5 });

        expect(scan.models.map(({ id }) => id)).toEqual(["m00", "m01", "m02", "m03", "m04"]);
        expect(scan.truncated).toBe("the scan stopped after 5 folder entries; models beyond them are not listed");
    });

    it("refuses a file that changed since it was found, saying what changed", () => {
        const home = tempHome();
        const file = writeGguf(path.join(home, "m.gguf"));
        const identity = fileIdentity(file)!;
        expect(() => checkUnchanged("m", file, identity)).not.toThrow();

        fs.appendFileSync(file, "more bytes");

        expect(() => checkUnchanged("m", file, identity)).toThrow(
            expect.objectContaining({ code: "model_file_changed", message: expect.stringContaining(`its size went from 9 to 19 bytes`) })
        );
    });
});
