import fs from "node:fs/promises";
import path from "node:path";
import type { EmbeddingResult } from "../../contract/engineProtocol.js";
import { retrievalLimits, type RetrievalStatus, type RetrievedChunk } from "../../contract/retrieval.js";
import { isStoreId } from "../../contract/workspaces.js";
import { invariant, KvaultError } from "../../engine/index.js";
import { parseJsonObject } from "../store/readStoredValues.js";
import { writeFileAtomic } from "../store/writeFileAtomic.js";
import { chunkText } from "./chunkText.js";

/** Retrieval is off for the workspace: turn it on in its settings first. */
export class RetrievalOffError extends KvaultError {
    readonly code = "retrieval_off";
}

/** A workspace's index file that cannot be read: it is left as it is. */
export class RetrievalIndexError extends KvaultError {
    readonly code = "retrieval_index_invalid";
}

/** Inputs per embed call. */
const EMBED_BATCH = 64;

interface IndexFile {
    readonly v: 1;
    readonly files: { readonly name: string; readonly chunks: { readonly text: string; readonly vector: readonly number[] }[] }[];
}

/**
 * Each workspace's own retrieval index, one file per workspace (`retrieval/<workspace id>.json` in
 * the data directory): its existence is the workspace's switch. Every method takes the workspace
 * and opens that file alone, so a workspace's turn never reads another's chunks; deleting the
 * workspace deletes its file.
 */
export class RetrievalIndexes {
    #queue: Promise<unknown> = Promise.resolve();

    constructor(
        private readonly dataDir: string,
        private readonly embed: (inputs: string[]) => Promise<EmbeddingResult>
    ) {}

    async status(workspace: string): Promise<RetrievalStatus> {
        const index = await this.#read(workspace);
        return {
            enabled: index !== undefined,
            files: (index?.files ?? []).map((file) => ({ name: file.name, numChunks: file.chunks.length }))
        };
    }

    /** On: an empty index; off: the index and its chunks deleted. */
    setEnabled(workspace: string, enabled: boolean): Promise<RetrievalStatus> {
        return this.#enqueue(async () => {
            if (!enabled) {
                await this.remove(workspace);
            } else if ((await this.#read(workspace)) === undefined) {
                await fs.mkdir(path.dirname(this.#file(workspace)), { recursive: true, mode: 0o700 });
                await writeFileAtomic(this.#file(workspace), JSON.stringify({ v: 1, files: [] } satisfies IndexFile));
            }
            return this.status(workspace);
        });
    }

    /** Chunks `text`, embeds every chunk with the loaded model and keeps them in the workspace's index under `name`. */
    add(workspace: string, name: string, text: string): Promise<RetrievalStatus> {
        return this.#enqueue(async () => {
            const index = await this.#read(workspace);
            if (index === undefined) {
                throw new RetrievalOffError(
                    `Retrieval is off for the workspace ${workspace}: turn on "Retrieve from files too large to fit" in its settings, then attach ${name} again.`
                );
            }
            const chunks = chunkText(text, retrievalLimits.chunkChars);
            const numChunks = index.files.reduce((sum, file) => sum + file.chunks.length, 0) + chunks.length;
            if (numChunks > retrievalLimits.maxChunksPerWorkspace) {
                throw new RetrievalOffError(
                    `${name} makes ${chunks.length.toLocaleString("en-US")} chunks; with this workspace's others that is ${numChunks.toLocaleString("en-US")}, over the ${retrievalLimits.maxChunksPerWorkspace.toLocaleString("en-US")} an index keeps. Start a new workspace for it.`
                );
            }
            const vectors: (readonly number[])[] = [];
            for (let start = 0; start < chunks.length; start += EMBED_BATCH) {
                vectors.push(...(await this.embed(chunks.slice(start, start + EMBED_BATCH))).embeddings);
            }
            invariant(vectors.length === chunks.length, `embed answered ${vectors.length} vectors for ${chunks.length} chunks`);
            const next: IndexFile = {
                v: 1,
                files: [...index.files, { name, chunks: chunks.map((chunk, at) => ({ text: chunk, vector: vectors[at]! })) }]
            };
            await writeFileAtomic(this.#file(workspace), JSON.stringify(next));
            return this.status(workspace);
        });
    }

    /** The workspace's chunks nearest to `query`, best first, at most `maxChunks`; none when its index is off or empty. */
    async search(workspace: string, query: string, maxChunks: number): Promise<RetrievedChunk[]> {
        const index = await this.#read(workspace);
        if (index === undefined || index.files.length === 0 || query.trim() === "") {
            return [];
        }
        const [question] = (await this.embed([query])).embeddings;
        const scored = index.files.flatMap((file) =>
            file.chunks.map((chunk, at) => ({ file: file.name, index: at, text: chunk.text, score: cosine(question!, chunk.vector) }))
        );
        return scored.sort((a, b) => b.score - a.score).slice(0, maxChunks);
    }

    /** Deletes the workspace's index (with the workspace, or when retrieval is turned off). */
    async remove(workspace: string): Promise<void> {
        await fs.rm(this.#file(workspace), { force: true });
    }

    #file(workspace: string): string {
        invariant(isStoreId(workspace), `a retrieval index is named by a store id, not ${JSON.stringify(workspace).slice(0, 80)}`);
        return path.join(this.dataDir, "retrieval", `${workspace}.json`);
    }

    async #read(workspace: string): Promise<IndexFile | undefined> {
        let text: string;
        try {
            text = await fs.readFile(this.#file(workspace), "utf8");
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT") {
                return undefined;
            }
            throw error;
        }
        const parsed = parseJsonObject(text);
        if (!parsed.ok || parsed.value.v !== 1 || !Array.isArray(parsed.value.files)) {
            throw new RetrievalIndexError(
                `The retrieval index ${this.#file(workspace)} cannot be read; turn retrieval off and on again in the workspace's settings to start it anew.`
            );
        }
        return parsed.value as unknown as IndexFile;
    }

    #enqueue<T>(work: () => Promise<T>): Promise<T> {
        const result = this.#queue.then(work);
        this.#queue = result.catch(() => undefined);
        return result;
    }
}

function cosine(a: readonly number[], b: readonly number[]): number {
    let dot = 0;
    let normA = 0;
    let normB = 0;
    for (let at = 0; at < Math.min(a.length, b.length); at++) {
        dot += a[at]! * b[at]!;
        normA += a[at]! * a[at]!;
        normB += b[at]! * b[at]!;
    }
    return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}
