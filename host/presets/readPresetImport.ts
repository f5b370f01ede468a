// Import: a preset file as untrusted input, either one Export wrote (contract/presets.ts
// PresetExport) or LM Studio's (`~/.lmstudio/config-presets/*.preset.json`: `operation.fields` and
// `load.fields`, lists of `{key, value}`). Every preset is checked by the store's own schema; an
// LM Studio field Kvault has no setting for is named in `unmapped`, never silently dropped.
import type { Preset } from "../../contract/presets.js";
import { presetExportFormat, presetLimits } from "../../contract/presets.js";
import { readPreset } from "../../contract/rpc/presetSchemas.js";
import { defaultWorkspaceSettings, type WorkspaceSettings } from "../../contract/workspaces.js";
import { describe, isRecord, parseJsonObject, type Read } from "../store/readStoredValues.js";

/** The presets a file holds (without ids: the store gives them), and the fields it left out. */
export interface PresetFileContents {
    readonly presets: readonly Omit<Preset, "id">[];
    readonly unmapped: readonly string[];
}

/** LM Studio's prediction fields and the workspace setting each one is. */
const lmStudioFields: Readonly<Record<string, keyof WorkspaceSettings>> = Object.freeze({
    "llm.prediction.systemPrompt": "systemPrompt",
    "llm.prediction.temperature": "temperature",
    "llm.prediction.topKSampling": "topK",
    "llm.prediction.topPSampling": "topP",
    "llm.prediction.minPSampling": "minP",
    "llm.prediction.repeatPenalty": "repeatPenalty",
    "llm.prediction.maxPredictedTokens": "maxTokens",
    "llm.prediction.stopStrings": "stop",
    "llm.prediction.seed": "seed"
});

/** A stand-in id while a preset is checked; the store gives each imported preset its own. */
const CHECK_ID = "import";

export function readPresetImport(text: string, fileName: string): Read<PresetFileContents> {
    if (text.length > presetLimits.maxImportChars) {
        return fail(
            `it has ${text.length.toLocaleString("en-US")} characters; Kvault imports preset files of at most ${presetLimits.maxImportChars.toLocaleString("en-US")}`
        );
    }
    const parsed = parseJsonObject(text);
    if (!parsed.ok) {
        return fail(`it is ${parsed.reason}`);
    }
    const document = parsed.value;
    if (document.format === presetExportFormat.format) {
        return readKvaultExport(document);
    }
    if (isRecord(document.operation) || isRecord(document.load)) {
        return readLmStudioPreset(document, fileName);
    }
    return fail(`it is neither a Kvault preset export (format "${presetExportFormat.format}") nor an LM Studio preset (operation.fields)`);
}

function readKvaultExport(document: Record<string, unknown>): Read<PresetFileContents> {
    if (document.version !== presetExportFormat.version) {
        return fail(`it is version ${describe(document.version)}; this Kvault reads version ${presetExportFormat.version}`);
    }
    if (!Array.isArray(document.presets) || document.presets.length === 0) {
        return fail(`presets is ${describe(document.presets)}, not a list of at least one preset`);
    }
    const presets: Omit<Preset, "id">[] = [];
    for (const [index, item] of document.presets.entries()) {
        const read = readPreset(isRecord(item) ? { ...item, id: CHECK_ID } : item);
        if (!read.ok) {
            return fail(`presets[${index}]: ${read.reason}`);
        }
        presets.push({ name: read.value.name, settings: read.value.settings });
    }
    return { ok: true, value: { presets, unmapped: [] } };
}

function readLmStudioPreset(document: Record<string, unknown>, fileName: string): Read<PresetFileContents> {
    const settings: Record<string, unknown> = { ...defaultWorkspaceSettings };
    const unmapped: string[] = [];
    for (const section of ["operation", "load"] as const) {
        const fields = isRecord(document[section]) ? (document[section] as Record<string, unknown>).fields : undefined;
        if (fields === undefined) {
            continue;
        }
        if (!Array.isArray(fields)) {
            return fail(`${section}.fields is ${describe(fields)}, not a list`);
        }
        for (const [index, field] of fields.entries()) {
            if (!isRecord(field) || typeof field.key !== "string") {
                return fail(`${section}.fields[${index}] is ${describe(field)}, not a {key, value} object`);
            }
            const setting = section === "operation" ? lmStudioFields[field.key] : undefined;
            if (setting === undefined) {
                unmapped.push(field.key);
                continue;
            }
            // A sampler field is `{checked, value}`: unchecked is LM Studio's default, as absent is Kvault's.
            const value =
                isRecord(field.value) && "checked" in field.value
                    ? field.value.checked === true
                        ? field.value.value
                        : undefined
                    : field.value;
            if (value !== undefined) {
                settings[setting] = value;
            }
        }
    }
    const name = typeof document.name === "string" && document.name.trim() !== "" ? document.name : presetNameOf(fileName);
    const read = readPreset({ id: CHECK_ID, name: name.slice(0, presetLimits.maxNameChars), settings });
    if (!read.ok) {
        return fail(`as a Kvault preset, ${read.reason}`);
    }
    return { ok: true, value: { presets: [{ name: read.value.name, settings: read.value.settings }], unmapped: [...new Set(unmapped)] } };
}

/** "Coding.preset.json" → "Coding". */
function presetNameOf(fileName: string): string {
    const base = fileName.replace(/\.preset\.json$|\.json$/i, "").trim();
    return base === "" ? "Imported preset" : base;
}

function fail(reason: string): { ok: false; reason: string } {
    return { ok: false, reason };
}
