// What can go wrong with a model file, a download or the model library: all of it happens in the
// host's process (host/models/, host/supervisor/), so the errors live here, beside it; those a
// file's GGUF header shows are gguf/'s, where the one header reader lives, and are passed on here.
import { KvaultError } from "../../engine/index.js";
import { ModelUnreadableError } from "../../gguf/index.js";

export { ModelNotGgufError, ModelUnreadableError, ModelUnsupportedError } from "../../gguf/index.js";

/**
 * The process that inspects model files did not get ready in time: the machine, not the file, is
 * at fault, so the message says to try again; the code stays model_unreadable (the file was not read).
 */
export class InspectionStartTimeoutError extends ModelUnreadableError {
    constructor(
        readonly modelPath: string,
        readonly startupMs: number
    ) {
        super(
            `The process that inspects model files did not start within ${(startupMs / 1000).toLocaleString("en-US")} s, so ${modelPath} was not read: ` +
                "the machine is probably very busy. Nothing is wrong with the file as far as Kvault knows; try again."
        );
    }
}

/** A turn that was running when the user switched models; the new model never saw it. */
export class ModelSwitchedError extends KvaultError {
    readonly code = "model_switched";

    constructor(
        readonly modelName: string,
        what: "turn" | "call"
    ) {
        super(
            what === "turn"
                ? `The model was switched to ${modelName} while this turn ran; send the message again.`
                : `The model was switched to ${modelName} before this call was answered; try again.`
        );
    }
}

/** A download source that is not an http(s) URL or an `hf:` reference, or is too long. */
export class DownloadSourceInvalidError extends KvaultError {
    readonly code = "download_source_invalid";
}

/** The server refused the download (e.g. 404) or the connection failed. */
export class DownloadFailedError extends KvaultError {
    readonly code = "download_failed";
}

/** cancelDownload with an id that names no download. */
export class DownloadUnknownError extends KvaultError {
    readonly code = "download_unknown";
}

/** A download stopped part-way (the connection dropped and stayed down, or Kvault stopped); the message says what is kept. */
export class DownloadInterruptedError extends KvaultError {
    readonly code = "download_interrupted";
}

/** resumeDownload of a download that has nothing to resume: it runs, finished, or kept no partial file. */
export class DownloadNotResumableError extends KvaultError {
    readonly code = "download_not_resumable";
}

/** The file on the server changed while it downloaded, so what arrived may mix two versions; it was deleted. */
export class DownloadChangedError extends KvaultError {
    readonly code = "download_changed";
}

/** forgetModel with an id the model library does not hold. */
export class LibraryModelUnknownError extends KvaultError {
    readonly code = "library_model_unknown";
}

/** forgetModel asked to delete a file Kvault did not download (a model the user opened from their disk). */
export class LibraryFileNotOwnedError extends KvaultError {
    readonly code = "library_file_not_owned";
}

/** forgetModel asked to delete the file of the model the engine runs now. */
export class LibraryModelInUseError extends KvaultError {
    readonly code = "library_model_in_use";
}

/**
 * The server's sizes disagree: HEAD said one and the GET whose bytes are written another, a range
 * answer does not match the range asked, or a body ran past the length it announced. Nothing past
 * the announced size is written.
 */
export class DownloadSizeMismatchError extends KvaultError {
    readonly code = "download_size_mismatch";
}

/** A model file used in place (another app's, or a folder the user added) changed after Kvault inspected it. */
export class ModelFileChangedError extends KvaultError {
    readonly code = "model_file_changed";
}

/** The API named a model that is neither loaded nor found on disk. */
export class ModelNotFoundError extends KvaultError {
    readonly code = "model_not_found";
}

/** A model whose planned memory does not fit the budget, even with every idle model unloaded. */
export class ModelMemoryBudgetError extends KvaultError {
    readonly code = "model_memory_budget";
}
