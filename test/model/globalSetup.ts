import { ensureGeneratedModel } from "../support/generatedModels.js";

// Model tests load generated GGUFs; make them once per run, before any worker starts.
export default function setup(): void {
    ensureGeneratedModel("tiny");
    ensureGeneratedModel("small");
}
