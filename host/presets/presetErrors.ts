import { KvaultError } from "../../engine/index.js";

/** The presets file cannot be read as Kvault wrote it: it is left as it is, and no preset call changes anything until it is fixed or moved. */
export class PresetFileError extends KvaultError {
    readonly code = "preset_file_invalid";

    constructor(
        readonly file: string,
        readonly reason: string
    ) {
        super(
            `The presets file ${file} cannot be read: ${reason}. Nothing was changed. Fix the file, or move it away to start again ` +
                "from the shipped presets, then try again."
        );
    }
}

/** A file given to Import holds no preset Kvault can take: nothing was imported. */
export class PresetImportError extends KvaultError {
    readonly code = "preset_import_invalid";
}

/** A change would pass a preset limit (presetLimits): nothing was written. */
export class PresetLimitError extends KvaultError {
    readonly code = "preset_limit_exceeded";
}
