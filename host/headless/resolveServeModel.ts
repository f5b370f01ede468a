import fs from "node:fs";
import path from "node:path";
import { KvaultError } from "../../engine/index.js";
import { makeSyntheticModel, SYNTHETIC_MODEL_VERSION } from "../../synthetic/index.js";
import { inspectModelInChild, type ModelInspector } from "../models/inspectModelInChild.js";
import type { ServeOptions } from "./serveOptions.js";

export class ModelFileError extends KvaultError {
    readonly code = "model_file_unusable";
}

const GGUF_MAGIC = Buffer.from("GGUF");

/**
 * The model file to serve and its API id: a built-in preset is generated into the data directory
 * on first use (no download); a path must be a readable GGUF file.
 */
export function resolveServeModel(options: ServeOptions, log: (line: string) => void): { readonly path: string; readonly id: string } {
    if (options.model.kind === "preset") {
        const directory = path.join(options.dataDir, "models");
        const modelPath = path.join(directory, `${options.model.preset}-v${SYNTHETIC_MODEL_VERSION}.gguf`);
        if (!fs.existsSync(modelPath)) {
            fs.mkdirSync(directory, { recursive: true });
            log(`Generating the built-in ${options.model.preset} model into ${modelPath} …`);
            makeSyntheticModel(options.model.preset, modelPath);
        }
        return { path: modelPath, id: serveModelId(modelPath) };
    }
    const modelPath = options.model.path;
    let header: Buffer;
    try {
        const fd = fs.openSync(modelPath, "r");
        try {
            header = Buffer.alloc(4);
            fs.readSync(fd, header, 0, 4, 0);
        } finally {
            fs.closeSync(fd);
        }
    } catch (error) {
        throw new ModelFileError(
            `Cannot read the model ${modelPath}: ${(error as Error).message}. Give the path of a GGUF file, or --model tiny.`
        );
    }
    if (!header.equals(GGUF_MAGIC)) {
        throw new ModelFileError(
            `${modelPath} is not a GGUF file (it starts with ${JSON.stringify(header.toString("latin1"))}, a GGUF file with "GGUF"). Open a .gguf model.`
        );
    }
    return { path: modelPath, id: serveModelId(modelPath) };
}

/**
 * A model file given with --model is untrusted input: its header is inspected in a child process
 * (a memory limit and a deadline) before the engine loads it, and a bad one refused with
 * model_unreadable, model_not_gguf or model_unsupported. The built-in presets are Kvault's own.
 */
export async function inspectServeModel(
    options: ServeOptions,
    model: { readonly path: string },
    inspect: ModelInspector = inspectModelInChild
): Promise<void> {
    if (options.model.kind === "file") {
        await inspect(model.path, { contextSize: options.context, sequences: options.decodeSequences });
    }
}

/** The API's id for a model file: the preset's name for a built-in model, else the file's name without ".gguf". */
export function serveModelId(modelPath: string): string {
    const name = path.basename(modelPath).replace(/\.gguf$/i, "");
    const preset = /^(tiny|small)-v\d+$/.exec(name);
    return preset ? preset[1]! : name;
}
