import crypto from "node:crypto";
import { formatChecksum, pageChecksum } from "../pages/pageChecksum.js";

/** The file's first bytes: "KVDISK" and the format's version. */
const MAGIC = Buffer.from("KVDISK01", "ascii");
const HEADER_LENGTH_BYTES = 4;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** AES-256's key. */
export const DISK_KV_KEY_BYTES = 32;
/** A header is a few hundred bytes of JSON: a length beyond this is a damaged or foreign file. */
const MAX_HEADER_BYTES = 4096;

/**
 * What a state on disk is bound to: the KV it holds is only meaningful for the same model file,
 * KV layout (which carries the KV type and row sizes), page geometry and decode context.
 */
export interface DiskKvBinding {
    /** `modelFingerprint` of the GGUF file. */
    readonly model: string;
    /** `layoutFingerprint`: the model's fingerprint with every layer's KV types and row sizes. */
    readonly layout: string;
    readonly kvCacheType: string;
    readonly pageTokens: number;
    /** The decode context's stream count and tokens per sequence: a state loads only into the same. */
    readonly numStreams: number;
    readonly sequenceCapacity: number;
}

/** The clear part of the file: no token and no byte of KV, only the binding and the sizes. */
interface DiskKvHeader {
    readonly binding: DiskKvBinding;
    readonly numStateBytes: number;
    /** xxh64 of the state's bytes, seeded as a page at token 0 is (pageChecksum). */
    readonly checksum: string;
}

export type OpenedDiskKv = { readonly ok: true; readonly state: Buffer } | { readonly ok: false; readonly reason: string };

/**
 * A sequence state sealed for disk: the binding in clear, authenticated with the workspace's id
 * as associated data (a file put in another workspace's place fails the tag), the state itself
 * encrypted with AES-256-GCM under `key` and a fresh nonce.
 */
export function sealDiskKv(state: Buffer, binding: DiskKvBinding, workspace: string, key: Buffer): Buffer[] {
    const header: DiskKvHeader = { binding, numStateBytes: state.length, checksum: formatChecksum(pageChecksum(state, 0)) };
    const headerBytes = Buffer.from(JSON.stringify(header), "utf8");
    const prefix = Buffer.alloc(MAGIC.length + HEADER_LENGTH_BYTES);
    MAGIC.copy(prefix, 0);
    prefix.writeUInt32LE(headerBytes.length, MAGIC.length);
    const nonce = crypto.randomBytes(NONCE_BYTES);
    const cipher = crypto.createCipheriv("aes-256-gcm", key, nonce);
    cipher.setAAD(associatedData(prefix, headerBytes, workspace));
    const sealed = Buffer.concat([cipher.update(state), cipher.final()]);
    return [prefix, headerBytes, nonce, sealed, cipher.getAuthTag()];
}

/**
 * The state a file holds, or why it is refused: not this format, torn, bound to another model or
 * setting, tampered with (the tag fails) or not the bytes that were sealed (the checksum fails).
 * Every length read from the file is checked against the bytes present before it is believed.
 */
export function openDiskKv(file: Buffer, expected: DiskKvBinding, workspace: string, key: Buffer): OpenedDiskKv {
    const prefixBytes = MAGIC.length + HEADER_LENGTH_BYTES;
    if (file.length < prefixBytes || !file.subarray(0, MAGIC.length).equals(MAGIC)) {
        return { ok: false, reason: `the file (${file.length} bytes) does not start as a Kvault KV state` };
    }
    const headerLength = file.readUInt32LE(MAGIC.length);
    if (headerLength > MAX_HEADER_BYTES || prefixBytes + headerLength > file.length) {
        return {
            ok: false,
            reason: `its header claims ${headerLength} bytes; the file holds ${file.length - prefixBytes} after the magic`
        };
    }
    const headerBytes = file.subarray(prefixBytes, prefixBytes + headerLength);
    const header = parseHeader(headerBytes);
    if (header === undefined) {
        return { ok: false, reason: "its header is not the format's JSON" };
    }
    const mismatch = describeBindingMismatch(expected, header.binding);
    if (mismatch !== undefined) {
        return { ok: false, reason: mismatch };
    }
    const bodyStart = prefixBytes + headerLength + NONCE_BYTES;
    const numExpected = bodyStart + header.numStateBytes + TAG_BYTES;
    if (file.length !== numExpected) {
        return { ok: false, reason: `it is torn: ${file.length} bytes where its header makes ${numExpected}` };
    }
    const nonce = file.subarray(prefixBytes + headerLength, bodyStart);
    const tag = file.subarray(file.length - TAG_BYTES);
    let state: Buffer;
    try {
        const decipher = crypto.createDecipheriv("aes-256-gcm", key, nonce);
        decipher.setAAD(associatedData(file.subarray(0, prefixBytes), headerBytes, workspace));
        decipher.setAuthTag(tag);
        state = Buffer.concat([decipher.update(file.subarray(bodyStart, file.length - TAG_BYTES)), decipher.final()]);
    } catch {
        return {
            ok: false,
            reason: "its authentication tag does not match: the file was altered, or sealed with another key or for another workspace"
        };
    }
    const checksum = formatChecksum(pageChecksum(state, 0));
    if (checksum !== header.checksum) {
        return { ok: false, reason: `its state's checksum is ${checksum}, sealed as ${header.checksum}` };
    }
    return { ok: true, state };
}

function associatedData(prefix: Buffer, headerBytes: Buffer, workspace: string): Buffer {
    return Buffer.concat([prefix, headerBytes, Buffer.from(workspace, "utf8")]);
}

function parseHeader(bytes: Buffer): DiskKvHeader | undefined {
    let value: unknown;
    try {
        value = JSON.parse(bytes.toString("utf8"));
    } catch {
        return undefined;
    }
    const header = value as Partial<DiskKvHeader> | null;
    const binding = header?.binding as Partial<DiskKvBinding> | undefined;
    if (
        typeof header !== "object" ||
        header === null ||
        typeof binding !== "object" ||
        binding === null ||
        !Number.isSafeInteger(header.numStateBytes) ||
        (header.numStateBytes as number) < 0 ||
        typeof header.checksum !== "string"
    ) {
        return undefined;
    }
    return header as DiskKvHeader;
}

/** Which bound field differs, in words; undefined when the file was written for this engine. */
function describeBindingMismatch(expected: DiskKvBinding, actual: DiskKvBinding): string | undefined {
    const names: Record<keyof DiskKvBinding, string> = {
        model: "model file",
        layout: "KV layout",
        kvCacheType: "KV cache type",
        pageTokens: "page size in tokens",
        numStreams: "decode sequence count",
        sequenceCapacity: "tokens per decode sequence"
    };
    for (const field of Object.keys(names) as (keyof DiskKvBinding)[]) {
        if (actual[field] !== expected[field]) {
            return `it was written for ${names[field]} ${String(actual[field])}; this engine has ${String(expected[field])}`;
        }
    }
    return undefined;
}
