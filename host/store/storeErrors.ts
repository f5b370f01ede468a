import { KvaultError } from "../../engine/index.js";

/** The store was written by a newer Kvault: nothing is read or changed, so nothing of it is lost. */
export class StoreVersionError extends KvaultError {
    readonly code = "store_version_unsupported";

    constructor(
        readonly file: string,
        readonly version: number,
        readonly supported: number
    ) {
        super(
            `The chats in ${file} are in format ${version}; this Kvault reads formats up to ${supported}. ` +
                "They were written by a newer Kvault: update Kvault to open them. Nothing was changed."
        );
    }
}

/** A change could not be written to disk; what was saved before is intact, and this change is not saved. */
export class StoreWriteError extends KvaultError {
    readonly code = "store_write_failed";
}

/** The store could not be opened (its folder cannot be made or read). */
export class StoreOpenError extends KvaultError {
    readonly code = "store_unavailable";
}

/** A change names a workspace the store does not have (never saved, or deleted). */
export class WorkspaceNotFoundError extends KvaultError {
    readonly code = "workspace_not_found";

    constructor(readonly workspace: string) {
        super(
            `There is no workspace ${workspace} in the store: it was deleted, or creating it was not saved. Make a new workspace and try again.`
        );
    }
}

/** A size or count the store refuses: nothing was written. */
export class StoreLimitError extends KvaultError {
    readonly code = "store_limit_exceeded";
}

/** A chat file given to Import is not one Kvault exported (or was damaged since): nothing was imported. */
export class ChatImportError extends KvaultError {
    readonly code = "chat_import_invalid";
}
