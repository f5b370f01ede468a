import { ensureLlamaServer } from "../bench/peer/llamaServerBinary.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { ensureLocalLlamaBuild } from "../support/ensureLocalLlamaBuild.js";

// Model tests load generated GGUFs; make them once per run, before any worker starts. The
// backend tests run against a real llama-server: on a fresh checkout it is built here (about 10
// minutes on 2 cores, once, cached under .cache/), before any test, never inside a test's timeout.
// So is Kvault's local build of node-llama-cpp's binary (about 5 minutes), which the engine prefers.
export default function setup(): void {
    ensureLocalLlamaBuild();
    ensureGeneratedModel("tiny");
    ensureGeneratedModel("small");
    ensureLlamaServer();
}
