// A model file as it was when Kvault inspected it: another app (LM Studio, Ollama, a Hugging Face
// download) may rewrite or replace a file Kvault uses in place, and a changed file is refused.
import fs from "node:fs";
import { ModelFileChangedError } from "./modelErrors.js";

export interface FileIdentity {
    readonly size: number;
    readonly mtimeMs: number;
    /** The inode and device: a file replaced under the same name (a rename over it) has another. */
    readonly ino: number;
    readonly dev: number;
}

/** The identity of the file at `filePath` now (following links, as the engine's open does); undefined when it cannot be stat'ed. */
export function fileIdentity(filePath: string): FileIdentity | undefined {
    try {
        const stat = fs.statSync(filePath);
        return stat.isFile() ? { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, dev: stat.dev } : undefined;
    } catch {
        return undefined;
    }
}

/** What differs between two identities, in words; undefined when they are the same file unchanged. */
export function identityChange(before: FileIdentity, now: FileIdentity | undefined): string | undefined {
    if (now === undefined) {
        return "it is gone";
    }
    const changes: string[] = [];
    if (now.size !== before.size) {
        changes.push(`its size went from ${before.size.toLocaleString("en-US")} to ${now.size.toLocaleString("en-US")} bytes`);
    }
    if (now.mtimeMs !== before.mtimeMs) {
        changes.push(
            `it was modified at ${new Date(now.mtimeMs).toISOString()} (inspected as of ${new Date(before.mtimeMs).toISOString()})`
        );
    }
    if (now.ino !== before.ino || now.dev !== before.dev) {
        changes.push("another file was put in its place");
    }
    return changes.length === 0 ? undefined : changes.join(", ");
}

/** Throws model_file_changed, naming `id`, `filePath` and what changed, when the file is no longer the one inspected. */
export function checkUnchanged(id: string, filePath: string, before: FileIdentity): void {
    const change = identityChange(before, fileIdentity(filePath));
    if (change !== undefined) {
        throw new ModelFileChangedError(
            `The model "${id}" (${filePath}) changed since Kvault inspected it: ${change}. Kvault uses this file in place and does not load a file that changes under it; wait until the app writing it is done, then list the models again (GET /v1/models) to have it inspected anew.`
        );
    }
}
