// Saved presets: a system prompt with sampling settings under a name, kept by the host in the data
// directory (host/presets/PresetStore.ts) and applied to a workspace by the renderer
// (renderer/presets/). A preset holds the same settings a workspace does, checked by the same schema.
import type { WorkspaceSettings } from "./workspaces.js";

export interface Preset {
    /** A store id (contract/workspaces.ts isStoreId): the renderer makes one for a new preset. */
    readonly id: string;
    readonly name: string;
    readonly settings: WorkspaceSettings;
}

/** What listPresets answers, and every change of the presets after it. */
export interface PresetList {
    readonly presets: readonly Preset[];
}

/** What importPresets answers: the presets now, those it added, and the fields of the file it did not take (LM Studio's that Kvault has no setting for). */
export interface PresetImportResult extends PresetList {
    readonly imported: readonly Preset[];
    /** Each field left out, once, as the file names it ("llm.prediction.llama.cpuThreads"). */
    readonly unmapped: readonly string[];
}

/** The file Export writes and Import reads back (Import also reads LM Studio's preset files). */
export const presetExportFormat = Object.freeze({ format: "kvault-presets", version: 1 });

export interface PresetExport {
    readonly format: typeof presetExportFormat.format;
    readonly version: typeof presetExportFormat.version;
    readonly presets: readonly Omit<Preset, "id">[];
}

export const presetLimits = Object.freeze({
    maxPresets: 500,
    maxNameChars: 80,
    /** An imported preset file, in characters: a system prompt of 100,000 characters a preset fits many times. */
    maxImportChars: 4_000_000
});

/** The file Export writes for `presets`. */
export function presetExport(presets: readonly Preset[]): PresetExport {
    return { ...presetExportFormat, presets: presets.map(({ name, settings }) => ({ name, settings })) };
}
