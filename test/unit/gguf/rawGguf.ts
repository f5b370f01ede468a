// Builds GGUF bytes by hand, lies included: any count, length, type or dimension, whatever the
// bytes that follow. synthetic/gguf writes only well-formed files; the reader's tests need the rest.

/** `gguf_type` ids. */
export const T = {
    u8: 0,
    i8: 1,
    u16: 2,
    i16: 3,
    u32: 4,
    i32: 5,
    f32: 6,
    bool: 7,
    string: 8,
    array: 9,
    u64: 10,
    i64: 11,
    f64: 12
} as const;

export class RawGguf {
    readonly #parts: Buffer[] = [];

    u32(value: number): this {
        const bytes = Buffer.alloc(4);
        bytes.writeUInt32LE(value >>> 0);
        return this.bytes(bytes);
    }

    u64(value: number | bigint): this {
        const bytes = Buffer.alloc(8);
        bytes.writeBigUInt64LE(BigInt.asUintN(64, BigInt(value)));
        return this.bytes(bytes);
    }

    /** A string with its true length, or the length given. */
    string(value: string, claimedLength?: number | bigint): this {
        const bytes = Buffer.from(value, "utf8");
        return this.u64(claimedLength ?? bytes.length).bytes(bytes);
    }

    bytes(bytes: Uint8Array): this {
        this.#parts.push(Buffer.from(bytes));
        return this;
    }

    /** A metadata entry: key, type, and the value's bytes as given. */
    entry(key: string, type: number, value: (raw: this) => void): this {
        this.string(key).u32(type);
        value(this);
        return this;
    }

    /** A tensor's entry: name, dimensions, ggml type, data offset. */
    tensor(name: string, dims: readonly (number | bigint)[], ggmlType: number, offset: number | bigint, numDims = dims.length): this {
        this.string(name).u32(numDims);
        for (const dim of dims) {
            this.u64(dim);
        }
        return this.u32(ggmlType).u64(offset);
    }

    /** Zeros up to a multiple of `alignment`, where a tensor's data would start. */
    padTo(alignment: number): this {
        const length = this.build().length;
        return this.bytes(Buffer.alloc((alignment - (length % alignment)) % alignment));
    }

    build(): Buffer {
        return Buffer.concat(this.#parts);
    }
}

/** Magic, version and the two counts: the first 24 bytes of every GGUF file. */
export function ggufStart(counts: { tensors?: number | bigint; entries?: number | bigint; version?: number } = {}): RawGguf {
    return new RawGguf()
        .bytes(Buffer.from("GGUF"))
        .u32(counts.version ?? 3)
        .u64(counts.tensors ?? 0)
        .u64(counts.entries ?? 0);
}
