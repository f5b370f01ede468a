import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppModelError, DEMO_MODEL_PRESET, appModelId, demoModelPath, resolveAppModel } from "../../../../main/engine/resolveAppModel.js";

let directory: string;
const logged: string[] = [];
const log = (line: string): void => void logged.push(line);

beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-models-"));
    logged.length = 0;
});

afterEach(() => {
    fs.rmSync(directory, { recursive: true, force: true });
});

describe("resolveAppModel", () => {
    it("generates the demo model on first use, whole, and reuses it after", () => {
        const modelsDirectory = path.join(directory, "models");
        const first = resolveAppModel(modelsDirectory, null, log);
        expect(first.id).toBe(DEMO_MODEL_PRESET);
        expect(path.dirname(first.path)).toBe(modelsDirectory);
        expect(fs.readFileSync(first.path).subarray(0, 4).toString("latin1")).toBe("GGUF");
        expect(fs.readdirSync(modelsDirectory)).toEqual([path.basename(first.path)]); // no partial file left
        expect(logged).toHaveLength(1);

        fs.utimesSync(first.path, new Date(0), new Date(0));
        expect(resolveAppModel(modelsDirectory, null, log)).toEqual(first);
        expect(fs.statSync(first.path).mtimeMs).toBe(0);
        expect(logged).toHaveLength(1);
    });

    it("uses the file the settings name, with its name as the id", () => {
        const modelPath = path.join(directory, "Llama-3.2-1B.Q4_K_M.gguf");
        fs.writeFileSync(modelPath, "GGUF");
        expect(resolveAppModel(path.join(directory, "models"), modelPath, log)).toEqual({ path: modelPath, id: "Llama-3.2-1B.Q4_K_M" });
        expect(fs.existsSync(path.join(directory, "models"))).toBe(false);
    });

    it.each([
        ["a file that does not exist", "missing.gguf", /Cannot open the model/],
        ["a directory", ".", /is not a file/]
    ])("refuses %s with model_file_unusable", (_, name, message) => {
        let caught: unknown;
        try {
            resolveAppModel(path.join(directory, "models"), path.join(directory, name), log);
        } catch (error) {
            caught = error;
        }
        expect(caught).toBeInstanceOf(AppModelError);
        expect((caught as AppModelError).code).toBe("model_file_unusable");
        expect((caught as Error).message).toMatch(message);
    });

    it("names a loaded model for the local API: tiny for the demo model, else the file name without .gguf", () => {
        const modelsDirectory = path.join(directory, "models");
        expect(appModelId(demoModelPath(modelsDirectory), modelsDirectory)).toBe(DEMO_MODEL_PRESET);
        expect(appModelId("/models/Qwen2.5-0.5B-Instruct-Q8_0.GGUF", modelsDirectory)).toBe("Qwen2.5-0.5B-Instruct-Q8_0");
        expect(appModelId(path.join(modelsDirectory, "downloaded.gguf"), modelsDirectory)).toBe("downloaded");
    });
});
