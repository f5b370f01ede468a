import fs from "node:fs";
import path from "node:path";
import { KvaultError } from "../../engine/index.js";
import { makeSyntheticModel, SYNTHETIC_MODEL_VERSION } from "../../synthetic/index.js";
import type { ModelInspector } from "../../host/models/inspectModelInChild.js";

/** The model the settings name cannot be used; the engine was not started. */
export class AppModelError extends KvaultError {
    readonly code = "model_file_unusable";
}

export interface AppModel {
    readonly path: string;
    /** What `/v1/models` lists and the API's `model` field must name. */
    readonly id: string;
}

/** The built-in demo model: generated, never downloaded; under 1 MB. */
export const DEMO_MODEL_PRESET = "tiny";

/**
 * The GGUF the engine loads: `modelPath` from the settings, or the built-in demo model, generated
 * into `modelsDirectory` on first use. The engine process checks the file's contents itself and
 * reports a bad one with its reason; this only makes sure there is a file to hand it.
 */
export function resolveAppModel(modelsDirectory: string, modelPath: string | null, log: (line: string) => void): AppModel {
    if (modelPath !== null) {
        let isFile: boolean;
        try {
            isFile = fs.statSync(modelPath).isFile();
        } catch (error) {
            throw new AppModelError(
                `Cannot open the model ${modelPath} (${(error as Error).message}). Choose a GGUF file that exists, or the built-in demo model.`
            );
        }
        if (!isFile) {
            throw new AppModelError(`${modelPath} is not a file. Choose a GGUF file, or the built-in demo model.`);
        }
        return { path: modelPath, id: appModelId(modelPath, modelsDirectory) };
    }
    const demoPath = demoModelPath(modelsDirectory);
    if (!fs.existsSync(demoPath)) {
        fs.mkdirSync(modelsDirectory, { recursive: true });
        log(`Generating the built-in demo model into ${demoPath} …`);
        // Written beside and renamed into place: a start interrupted mid-write leaves no half model that the next start would trust.
        const partial = `${demoPath}.${process.pid}.partial`;
        try {
            makeSyntheticModel(DEMO_MODEL_PRESET, partial);
            fs.renameSync(partial, demoPath);
        } finally {
            fs.rmSync(partial, { force: true });
        }
    }
    return { path: demoPath, id: DEMO_MODEL_PRESET };
}

/** Where the built-in demo model lives in the app's models directory. */
export function demoModelPath(modelsDirectory: string): string {
    return path.join(modelsDirectory, `${DEMO_MODEL_PRESET}-v${SYNTHETIC_MODEL_VERSION}.gguf`);
}

/** The id the local API lists for a loaded model: "tiny" for the demo model, else its file name without .gguf. */
export function appModelId(modelPath: string, modelsDirectory: string): string {
    return path.resolve(modelPath) === path.resolve(demoModelPath(modelsDirectory))
        ? DEMO_MODEL_PRESET
        : path.basename(modelPath).replace(/\.gguf$/i, "");
}

/**
 * The model the settings name is untrusted input (a download, a file from anywhere): its header is
 * inspected (in a child process, with a memory limit and a deadline) before the engine loads it; a
 * bad one rejects with model_unreadable, model_not_gguf or model_unsupported. The demo model is Kvault's own.
 */
export async function inspectAppModel(
    modelPath: string | null,
    inspect: ModelInspector,
    estimateFor: { readonly contextSize: number; readonly sequences: number }
): Promise<void> {
    if (modelPath !== null) {
        await inspect(modelPath, estimateFor);
    }
}
