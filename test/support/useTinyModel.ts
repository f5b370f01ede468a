import { afterAll, beforeAll } from "vitest";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import type { LlamaModel } from "../../engine/runtime/types.js";
import { generatedModelPath } from "./generatedModels.js";

/** What a test disposes after the file's tests: a node-llama-cpp context, or a role context over one. */
interface Disposable {
    dispose(): Promise<void>;
}

/** The tiny model on a CPU runtime, for a file's tests; see {@link useTinyModel}. */
export interface TinyModel {
    readonly runtime: LlamaRuntime;
    readonly model: LlamaModel;
    /** Disposes `context` after the file's tests, before the model; returns it. */
    track<T extends Disposable>(context: T): T;
}

/**
 * Loads the tiny model on a CPU runtime of `maxThreads` before the file's tests and disposes it,
 * with every context tracked, after them: the setup of the files that drive node-llama-cpp's
 * contexts directly (test/model/runtime).
 */
export function useTinyModel(maxThreads: number): TinyModel {
    let runtime: LlamaRuntime | undefined;
    let model: LlamaModel | undefined;
    const contexts: Disposable[] = [];
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false, maxThreads });
        model = await runtime.loadModel(generatedModelPath("tiny"));
    });
    afterAll(async () => {
        for (const context of contexts.splice(0)) {
            await context.dispose();
        }
        await model?.dispose();
        await runtime?.dispose();
    });
    return {
        get runtime() {
            return runtime!;
        },
        get model() {
            return model!;
        },
        track(context) {
            contexts.push(context);
            return context;
        }
    };
}
