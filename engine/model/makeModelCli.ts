// `npm run make-model -- <preset> <out.gguf>`: writes a generated GGUF model.
import path from "node:path";
import { KvaultError } from "../core/KvaultError.js";
import { makeSyntheticModel } from "./makeSyntheticModel.js";
import { modelPresetNames, modelPresets } from "./modelPresets.js";

function usage(): string {
    const presets = modelPresetNames.map((name) => `  ${name.padEnd(6)} ${modelPresets[name].description}`).join("\n");
    return `Usage: npm run make-model -- <preset> <out.gguf>\n\nPresets:\n${presets}\n`;
}

const [presetName, outPath, ...extra] = process.argv.slice(2);
if (presetName == null || outPath == null || extra.length > 0) {
    process.stderr.write(usage());
    process.exit(2);
}

try {
    const startedAt = performance.now();
    const written = makeSyntheticModel(presetName, path.resolve(outPath));
    const seconds = (performance.now() - startedAt) / 1000;
    process.stdout.write(
        `Wrote ${written.path}: preset ${presetName}, ${written.numParameters.toLocaleString("en-US")} parameters, ` +
            `${written.numBytes.toLocaleString("en-US")} bytes in ${seconds.toFixed(1)} s\n`
    );
} catch (error) {
    if (!(error instanceof KvaultError)) {
        throw error;
    }
    process.stderr.write(`make-model: ${error.message}\n`);
    process.exit(error.code === "unknown_model_preset" ? 2 : 1);
}
