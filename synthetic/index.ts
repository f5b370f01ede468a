// Synthetic models: the seeded GGUF files the demo, the headless server's --model presets, the
// engine's fault drills, `npm run make-model` and the tests load. The generator, its GGUF writer and
// quantizers run in whichever process asks for a file; they are no part of the engine's serving path.

export {
    makeSyntheticModel,
    ModelWriteError,
    UnknownModelPresetError,
    UnknownModelQuantError,
    type MakeModelOptions
} from "./model/makeSyntheticModel.js";
export { SYNTHETIC_MODEL_VERSION } from "./model/syntheticModel.js";
