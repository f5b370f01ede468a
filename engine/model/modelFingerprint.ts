import fs from "node:fs";
import { xxh64 } from "@node-rs/xxhash";

const HEADER_BYTES = 1 << 20;
const NUM_SAMPLES = 16;
const SAMPLE_BYTES = 1 << 16;

/**
 * A cheap identity for a GGUF file: its size, its first MiB (header, metadata, tensor table and
 * the start of the weights) and 16 samples of 64 KiB spread over the weights. Two files that differ
 * in geometry, vocabulary or weights get different fingerprints without reading gigabytes.
 * KV pages carry it, so pages written by one model are never loaded into another.
 */
export function modelFingerprint(modelPath: string): string {
    const fd = fs.openSync(modelPath, "r");
    try {
        const { size } = fs.fstatSync(fd);
        const parts: Buffer[] = [Buffer.from(`size:${size};`)];
        const read = (position: number, length: number): void => {
            const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - position)));
            const numRead = buffer.length === 0 ? 0 : fs.readSync(fd, buffer, 0, buffer.length, position);
            parts.push(buffer.subarray(0, numRead));
        };
        read(0, HEADER_BYTES);
        for (let sample = 1; sample <= NUM_SAMPLES; sample++) {
            read(Math.floor((size * sample) / (NUM_SAMPLES + 1)), SAMPLE_BYTES);
        }
        return xxh64(Buffer.concat(parts)).toString(16).padStart(16, "0");
    } finally {
        fs.closeSync(fd);
    }
}
