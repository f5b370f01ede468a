import fs from "node:fs/promises";
import path from "node:path";
import type { StoreProblem } from "../../contract/workspaces.js";
import { STORE_FORMAT_VERSION } from "./journalRecords.js";
import { parseMetadata } from "./metadataFile.js";
import { readV1Workspaces, type V1Omission } from "./readV1Workspaces.js";
import { StoreVersionError } from "./storeErrors.js";
import { fileStamp, type StorePaths } from "./storePaths.js";
import { writeStoreFiles } from "./writeStoreFiles.js";
import { syncDirectory, writeFileAtomic } from "./writeFileAtomic.js";

export interface MigrationContext {
    readonly paths: StorePaths;
    readonly now: () => Date;
    readonly log: (line: string) => void;
}

/**
 * One step between store formats. `run` writes the new format's files first and switches the
 * version last (one atomic write), so a crash midway leaves `from` in charge and the next start
 * runs the step again. What it cannot carry over it returns as problems, kept in a copy.
 */
export interface Migration {
    readonly from: number;
    readonly to: number;
    run(context: MigrationContext): Promise<StoreProblem[]>;
}

/** Format 1 (the renderer's localStorage document at <dataDir>/workspaces.json) → format 2 (a list plus one chat file per workspace). */
const v1ToV2: Migration = {
    from: 1,
    to: 2,
    async run({ paths, now, log }) {
        const text = await fs.readFile(paths.v1Document, "utf8");
        const read = readV1Workspaces(text);
        await writeStoreFiles(paths, read.workspaces, read.selectedId); // the switch: index.json, in the newest format (a superset of 2)
        const backup = await keepV1Document(paths, now());
        log(
            `Moved ${read.workspaces.length} workspace(s) from ${paths.v1Document} to ${paths.directory}; the old file is kept as ${backup}.`
        );
        return omissionProblems(read.omissions, backup);
    }
};

/**
 * Format 2 → format 3 (branches: a message names its parent; chat records select and delete; a
 * workspace's settings may hold the sampler's other knobs). Format 2's chat records are format 3's
 * too, so the chat files stay as they are; only the workspace list's version changes, in one
 * atomic write, its entries kept byte for byte. An older Kvault then refuses the store instead of
 * reading branches as one chat.
 */
const v2ToV3: Migration = {
    from: 2,
    to: 3,
    async run({ paths, log }) {
        const text = await fs.readFile(paths.metadata, "utf8");
        const document = JSON.parse(text) as Record<string, unknown>; // detectStoreVersion read it as a version-2 list
        if (document.v === 3) {
            return []; // format 1's step writes the newest list already
        }
        await writeFileAtomic(paths.metadata, `${JSON.stringify({ ...document, v: 3 }, null, 2)}\n`);
        log(`Moved the workspace list ${paths.metadata} from format 2 to 3 (branches); the chat files are read as they are.`);
        return [];
    }
};

/** In order: a store at version n runs every migration from n up. */
export const migrations: readonly Migration[] = [v1ToV2, v2ToV3];

/**
 * The store's format on disk: the workspace list's `v`; else 1 when only the format-1 document
 * exists; else 0 (nothing yet). A list that cannot be read counts as the current format: its
 * reader sets it aside and recovers the chats.
 */
export async function detectStoreVersion(paths: StorePaths): Promise<number> {
    const metadata = await readIfExists(paths.metadata);
    if (metadata !== undefined) {
        const parsed = parseMetadata(metadata);
        return parsed.ok ? parsed.value.version : STORE_FORMAT_VERSION;
    }
    return (await readIfExists(paths.v1Document)) !== undefined ? 1 : 0;
}

/** Brings the store to STORE_FORMAT_VERSION; refuses, changing nothing, a store from a newer Kvault. */
export async function migrateStore(context: MigrationContext): Promise<StoreProblem[]> {
    let version = await detectStoreVersion(context.paths);
    if (version > STORE_FORMAT_VERSION) {
        throw new StoreVersionError(context.paths.metadata, version, STORE_FORMAT_VERSION);
    }
    const problems: StoreProblem[] = [];
    // Each step raises the version, so this runs at most STORE_FORMAT_VERSION times.
    while (version !== 0 && version < STORE_FORMAT_VERSION) {
        const from = version;
        const migration = migrations.find((candidate) => candidate.from === from);
        if (migration === undefined) {
            throw new Error(`No migration from store format ${from}; formats 1 to ${STORE_FORMAT_VERSION} must each have one.`);
        }
        problems.push(...(await migration.run(context)));
        version = migration.to;
    }
    // A crash after the switch but before the old document was renamed: finish the rename now.
    if (version === STORE_FORMAT_VERSION && (await readIfExists(context.paths.v1Document)) !== undefined) {
        const backup = await keepV1Document(context.paths, context.now());
        context.log(`The workspaces are in format ${STORE_FORMAT_VERSION} already; kept the old ${context.paths.v1Document} as ${backup}.`);
    }
    return problems;
}

/** Renames the format-1 document out of the way, keeping it: `workspaces.v1-backup-<time>.json`. */
async function keepV1Document(paths: StorePaths, time: Date): Promise<string> {
    const backup = path.join(path.dirname(paths.v1Document), `workspaces.v1-backup-${fileStamp(time)}.json`);
    await fs.rename(paths.v1Document, backup);
    await syncDirectory(path.dirname(backup));
    return backup;
}

/** What a format-1 document held that the store could not: in the kept document at `copy`. */
export function omissionProblems(omissions: readonly V1Omission[], copy: string): StoreProblem[] {
    return omissions.map((omission) => ({
        workspace: omission.workspace,
        workspaceName: omission.workspaceName,
        file: copy,
        line: null,
        kind: "corrupt",
        bytes: omission.bytes,
        reason: `${omission.path}: ${omission.reason}`,
        copy
    }));
}

async function readIfExists(file: string): Promise<string | undefined> {
    try {
        return await fs.readFile(file, "utf8");
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
            return undefined;
        }
        throw error;
    }
}
