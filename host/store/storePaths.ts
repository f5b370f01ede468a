import path from "node:path";

/**
 * Where the store keeps what, under the data directory (Electron's userData, or the headless
 * server's --data-dir). A workspace id is checked by isStoreId before it names a file.
 */
export interface StorePaths {
    /** Format 2: `workspaces/`, holding the list and one chat file per workspace. */
    readonly directory: string;
    /** Format 2: the workspace list with names, colours, settings, order and selection; its `v` is the store's format. */
    readonly metadata: string;
    /** Format 1: the renderer's localStorage document, as if written to a file. */
    readonly v1Document: string;
    journal(workspace: string): string;
}

export function storePaths(dataDir: string): StorePaths {
    const directory = path.join(dataDir, "workspaces");
    return {
        directory,
        metadata: path.join(directory, "index.json"),
        v1Document: path.join(dataDir, "workspaces.json"),
        journal: (workspace) => path.join(directory, `${workspace}.jsonl`)
    };
}

/** The id of a chat file's name (`<id>.jsonl`), or undefined for any other file. */
export function journalWorkspace(fileName: string): string | undefined {
    return fileName.endsWith(".jsonl") ? fileName.slice(0, -".jsonl".length) : undefined;
}

/** A time as a file-name suffix: 2026-01-05T05-04-49-123Z (no ':' for Windows). */
export function fileStamp(time: Date): string {
    return time.toISOString().replace(/[:.]/g, "-");
}
