import type { StoredWorkspace } from "../../contract/workspaces.js";
import { ChatJournal } from "./ChatJournal.js";
import { encodeMetadata, metaOf } from "./metadataFile.js";
import type { StorePaths } from "./storePaths.js";
import { writeFileAtomic } from "./writeFileAtomic.js";

/**
 * Writes whole workspaces in the store's format: each chat file first (each replaced atomically), the
 * workspace list last. Until the list is written nothing points at the new chat files, so a crash
 * midway leaves whatever was in charge before, and doing it again writes the same files.
 */
export async function writeStoreFiles(paths: StorePaths, workspaces: readonly StoredWorkspace[], selectedId: string | null): Promise<void> {
    for (const workspace of workspaces) {
        await new ChatJournal(paths.journal(workspace.id)).rewrite({ messages: workspace.messages, branches: workspace.branches ?? [] });
    }
    await writeFileAtomic(
        paths.metadata,
        encodeMetadata({
            selectedId,
            workspaces: workspaces.map(metaOf)
        })
    );
}
