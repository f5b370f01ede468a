// The two model files of 24 and 69 bytes that ended or pinned the host through node-llama-cpp's
// GGUF reader: a metadata array claiming 2^40 elements ("Fatal JavaScript invalid size error"),
// and a header claiming 2^62 metadata entries (never answers, memory grows ~20 MB/s).
import fs from "node:fs";
import path from "node:path";
import { T, ggufStart } from "../../../unit/gguf/rawGguf.js";

export const craftedGgufFiles = {
    hugeArray: {
        bytes: () =>
            ggufStart({ entries: 1 })
                .entry("tokenizer.ggml.tokens", T.array, (raw) => raw.u32(T.u32).u64(2n ** 40n))
                .build(),
        /** What Kvault's reader says of it. */
        detail: "metadata entry 1 of 1 (tokenizer.ggml.tokens) claims 1,099,511,627,776 elements of 4 bytes; the file has 0 bytes left"
    },
    hugeHeader: {
        bytes: () => ggufStart({ entries: 2n ** 62n }).build(),
        detail: "its header claims 4,611,686,018,427,387,904 metadata entries of at least 14 bytes each; the file has 0 bytes left"
    }
} as const;

export type CraftedGguf = keyof typeof craftedGgufFiles;

/** Writes the crafted file into `directory` as `<name>.gguf` and returns its path. */
export function writeCraftedGguf(directory: string, name: CraftedGguf): string {
    const filePath = path.join(directory, `${name}.gguf`);
    fs.writeFileSync(filePath, craftedGgufFiles[name].bytes());
    return filePath;
}

/** The model_unreadable message Kvault gives for the crafted file at `filePath`. */
export function craftedRefusal(filePath: string, name: CraftedGguf): string {
    return `${filePath} starts like a GGUF file, but its header could not be read (${craftedGgufFiles[name].detail}): the file is probably truncated or damaged. Download or copy it again.`;
}
