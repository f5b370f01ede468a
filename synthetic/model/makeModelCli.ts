// `npm run make-model -- <preset> <out.gguf> [--quant q8_0]` writes a generated GGUF model;
// `npm run make-model -- --list` shows the presets with their sizes.
import path from "node:path";
import { KvaultError } from "../../engine/core/KvaultError.js";
import { makeSyntheticModel } from "./makeSyntheticModel.js";
import { modelQuants } from "./modelQuantization.js";
import { formatPresetCatalog } from "./presetCatalog.js";
import { allPresetNames, describePreset } from "./presetPlans.js";

function usage(): string {
    const width = Math.max(...allPresetNames.map((name) => name.length));
    const presets = allPresetNames.map((name) => `  ${name.padEnd(width)}  ${describePreset(name).description}`).join("\n");
    return (
        "Usage: npm run make-model -- <preset> <out.gguf> [--quant <" +
        modelQuants.join("|") +
        ">]\n       npm run make-model -- --list   (the presets with parameters, vocabulary and file sizes)\n\nPresets:\n" +
        `${presets}\n`
    );
}

function parse(args: readonly string[]): { list: true } | { list: false; preset: string; out: string; quant?: string } | undefined {
    if (args.length === 1 && args[0] === "--list") {
        return { list: true };
    }
    const positional: string[] = [];
    let quant: string | undefined;
    for (let i = 0; i < args.length; i++) {
        const arg = args[i]!;
        if (arg === "--quant" && quant === undefined && i + 1 < args.length) {
            quant = args[++i];
        } else if (arg.startsWith("--quant=") && quant === undefined) {
            quant = arg.slice("--quant=".length);
        } else if (arg.startsWith("-")) {
            return undefined;
        } else {
            positional.push(arg);
        }
    }
    const [preset, out] = positional;
    return preset !== undefined && out !== undefined && positional.length === 2 ? { list: false, preset, out, quant } : undefined;
}

const command = parse(process.argv.slice(2));
if (command === undefined) {
    process.stderr.write(usage());
    process.exit(2);
}

try {
    if (command.list) {
        process.stdout.write(`${formatPresetCatalog()}\n`);
    } else {
        const startedAt = performance.now();
        const written = makeSyntheticModel(command.preset, path.resolve(command.out), { quant: command.quant });
        const seconds = (performance.now() - startedAt) / 1000;
        process.stdout.write(
            `Wrote ${written.path}: preset ${command.preset}${command.quant === undefined ? "" : ` (${command.quant})`}, ` +
                `${written.numParameters.toLocaleString("en-US")} parameters, ${written.numBytes.toLocaleString("en-US")} bytes in ${seconds.toFixed(1)} s\n`
        );
    }
} catch (error) {
    if (!(error instanceof KvaultError)) {
        throw error;
    }
    process.stderr.write(`make-model: ${error.message}\n`);
    process.exit(error.code === "unknown_model_preset" || error.code === "unknown_model_quant" ? 2 : 1);
}
