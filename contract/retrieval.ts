// Retrieval for files too large to fit a workspace's window: their text in chunks, embedded by the
// loaded model and kept in that workspace's own index on disk (host/retrieval/), searched only for
// that workspace's turns; the chunks used go in the message, each naming its file and place.

export interface RetrievalStatus {
    readonly enabled: boolean;
    /** The files in this workspace's index. */
    readonly files: readonly { readonly name: string; readonly numChunks: number }[];
}

export interface RetrievedChunk {
    readonly file: string;
    /** The chunk's place in its file, from 0. */
    readonly index: number;
    readonly text: string;
    /** Cosine similarity to the question, -1 to 1. */
    readonly score: number;
}

export const retrievalLimits = Object.freeze({
    /** A chunk's characters: a few sentences, so several fit a small window beside the question. */
    chunkChars: 200,
    maxChunksPerWorkspace: 5_000,
    /** Chunks a question takes at most; fewer when they do not fit. */
    maxChunksPerQuestion: 3
});

/** How a chunk is sent in the message: its file and place, then its text. */
export function chunkBlock(chunk: RetrievedChunk): string {
    return `<chunk file="${chunk.file.replaceAll('"', "'")}" index="${chunk.index}">\n${chunk.text}\n</chunk>`;
}
