import { ensureLlamaServer } from "../bench/peer/llamaServerBinary.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";

// Model tests load generated GGUFs; make them once per run, before any worker starts. The
// backend tests run against a real llama-server: on a fresh checkout it is built here (about 10
// minutes on 2 cores, once, cached under .cache/), before any test, never inside a test's timeout.
export default function setup(): void {
    ensureGeneratedModel("tiny");
    ensureGeneratedModel("small");
    ensureLlamaServer();
}
