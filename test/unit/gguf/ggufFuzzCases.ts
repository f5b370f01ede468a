// fast-check arbitraries for GGUF headers, honest and lying: counts, lengths, value types, array
// nesting, tensor dimensions, types and offsets, each either true to the bytes that follow or
// drawn from the values that break readers (0, 2^32, 2^40, 2^62, 2^64 − 1, random). The result
// is then cut or padded to a random size and a few bytes may be flipped.
import fc from "fast-check";
import { T, ggufStart, type RawGguf } from "./rawGguf.js";

type Write = (raw: RawGguf) => void;

const fixedSizes: Readonly<Record<number, number>> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const fixedTypes = Object.keys(fixedSizes).map(Number);

const hugeCount = fc.oneof(
    fc.constantFrom(2n ** 32n, 2n ** 40n, 2n ** 53n + 1n, 2n ** 62n, 2n ** 63n, 2n ** 64n - 1n),
    // Big enough to exhaust a heap, small enough to be allocated: the slow way down.
    fc.bigInt({ min: 2n ** 16n, max: 2n ** 36n }),
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })
);
/** The true count, or a small or a huge lie; `truth` weighs the truth against the lies. */
const claimed = (actual: number, truth = 6): fc.Arbitrary<bigint> =>
    fc.oneof(
        { weight: truth, arbitrary: fc.constant(BigInt(actual)) },
        { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: 20n }) },
        { weight: 2, arbitrary: hugeCount }
    );

/** `arbitrary` one time in `1 + odds`, else null (fc.option's `freq` is the odds of null, the other way round). */
const sometimes = <V>(arbitrary: fc.Arbitrary<V>, odds: number): fc.Arbitrary<V | null> =>
    fc.oneof({ weight: odds, arbitrary: fc.constant(null) }, { weight: 1, arbitrary });

const text = fc.string({ maxLength: 12 });

const stringValue: fc.Arbitrary<Write> = text.chain((value) =>
    claimed(Buffer.byteLength(value)).map(
        (length): Write =>
            (raw) =>
                void raw.string(value, length)
    )
);

const fixedValue = (type: number): fc.Arbitrary<Write> =>
    fc.uint8Array({ minLength: fixedSizes[type]!, maxLength: fixedSizes[type]! }).map(
        (bytes): Write =>
            (raw) =>
                void raw.bytes(bytes)
    );

/** An array's element type, count and elements; arrays of arrays down to `depth` more levels. */
const arrayValue = (depth: number): fc.Arbitrary<Write> => {
    const elementTypes: fc.Arbitrary<number>[] = [
        fc.constantFrom(...fixedTypes),
        fc.constant(T.string),
        fc.integer({ min: 13, max: 2 ** 32 - 1 })
    ];
    if (depth > 0) {
        elementTypes.push(fc.constant(T.array));
    }
    return fc.oneof(...elementTypes).chain((elementType) => {
        const element: fc.Arbitrary<Write> =
            elementType === T.array
                ? arrayValue(depth - 1)
                : elementType === T.string
                  ? stringValue
                  : elementType in fixedSizes
                    ? fixedValue(elementType)
                    : fc.constant<Write>(() => undefined);
        return fc.array(element, { maxLength: 6 }).chain((elements) =>
            claimed(elements.length, 2).map(
                (count): Write =>
                    (raw) => {
                        raw.u32(elementType).u64(count);
                        elements.forEach((write) => write(raw));
                    }
            )
        );
    });
};

const value: fc.Arbitrary<{ type: number; write: Write }> = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...fixedTypes).chain((type) => fixedValue(type).map((write) => ({ type, write }))) },
    { weight: 3, arbitrary: stringValue.map((write) => ({ type: T.string, write })) },
    { weight: 3, arbitrary: arrayValue(3).map((write) => ({ type: T.array, write })) },
    { weight: 1, arbitrary: fc.integer({ min: 13, max: 2 ** 32 - 1 }).map((type) => ({ type, write: (() => undefined) as Write })) }
);

const alignmentEntry: fc.Arbitrary<Write> = fc
    .tuple(fc.constantFrom(T.u32, T.u64, T.string), fc.constantFrom(0, 1, 3, 8, 32, 48, 64, 2 ** 31))
    .map(
        ([type, alignment]): Write =>
            (raw) => {
                raw.string("general.alignment").u32(type);
                if (type === T.u32) {
                    raw.u32(alignment);
                } else if (type === T.u64) {
                    raw.u64(alignment);
                } else {
                    raw.string(String(alignment));
                }
            }
    );

const entry: fc.Arbitrary<Write> = fc.oneof(
    {
        weight: 8,
        arbitrary: fc
            .tuple(
                fc.oneof(
                    { weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
                    { weight: 1, arbitrary: fc.constantFrom("general.architecture", "tokenizer.ggml.tokens", "") }
                ),
                value
            )
            .map(
                ([key, { type, write }]): Write =>
                    (raw) => {
                        raw.string(key).u32(type);
                        write(raw);
                    }
            )
    },
    { weight: 1, arbitrary: alignmentEntry }
);

const dimension = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(0n, 1n, 2n, 32n, 64n, 256n) }, { weight: 1, arbitrary: hugeCount });

const tensor: fc.Arbitrary<Write> = fc
    .record({
        name: fc.oneof({ weight: 5, arbitrary: text }, { weight: 1, arbitrary: fc.string({ minLength: 60, maxLength: 70 }) }),
        dims: fc.array(dimension, { maxLength: 5 }),
        numDims: sometimes(fc.oneof(fc.nat({ max: 8 }), fc.constant(2 ** 32 - 1)), 6),
        ggmlType: fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom(0, 1, 2, 8, 12, 30) },
            { weight: 1, arbitrary: fc.nat({ max: 2 ** 32 - 1 }) }
        ),
        offset: fc.oneof(
            { weight: 6, arbitrary: fc.nat({ max: 8 }).map((blocks) => BigInt(blocks * 32)) },
            { weight: 1, arbitrary: hugeCount }
        )
    })
    .map(
        ({ name, dims, numDims, ggmlType, offset }): Write =>
            (raw) =>
                void raw.tensor(name, dims, ggmlType, offset, numDims ?? dims.length)
    );

/** A file that lies anywhere: header, tensor list, padding and some data, then cut, padded and flipped at random. */
const adversarialFile: fc.Arbitrary<Buffer> = fc
    .record({
        version: fc.oneof({ weight: 8, arbitrary: fc.constant(3) }, { weight: 1, arbitrary: fc.constantFrom(0, 1, 2, 4, 0x03000000) }),
        entries: fc.array(entry, { maxLength: 6 }),
        tensors: fc.array(tensor, { maxLength: 4 }),
        extraEntries: sometimes(hugeCount, 6),
        extraTensors: sometimes(hugeCount, 6),
        data: fc.nat({ max: 2048 }),
        cut: sometimes(fc.nat(), 3),
        flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { maxLength: 3 })
    })
    .map(({ version, entries, tensors, extraEntries, extraTensors, data, cut, flips }) => {
        const raw = ggufStart({ version, entries: extraEntries ?? entries.length, tensors: extraTensors ?? tensors.length });
        entries.forEach((write) => write(raw));
        tensors.forEach((write) => write(raw));
        return mutate(raw.padTo(32).bytes(Buffer.alloc(data)).build(), cut, flips);
    });

/** Honest values: the types llama.cpp reads, arrays of scalars and strings, lengths true. */
const honestValue: fc.Arbitrary<{ type: number; write: Write }> = fc.oneof(
    fc.constantFrom(...fixedTypes).chain((type) => fixedValue(type).map((write) => ({ type, write }))),
    text.map((value) => ({ type: T.string, write: ((raw) => void raw.string(value)) as Write })),
    fc.tuple(fc.constantFrom(...fixedTypes), fc.nat({ max: 40 })).chain(([elementType, count]) =>
        fc.uint8Array({ minLength: count * fixedSizes[elementType]!, maxLength: count * fixedSizes[elementType]! }).map((bytes) => ({
            type: T.array,
            write: ((raw) => void raw.u32(elementType).u64(count).bytes(bytes)) as Write
        }))
    ),
    fc.array(text, { maxLength: 20 }).map((strings) => ({
        type: T.array,
        write: ((raw) => {
            raw.u32(T.string).u64(strings.length);
            strings.forEach((value) => raw.string(value));
        }) as Write
    }))
);

/** ggml types with their block's elements and bytes: F32, F16, Q8_0. */
const honestTypes = [
    [0, 1, 4],
    [1, 1, 2],
    [8, 32, 34]
] as const;

/** A file llama.cpp's reader accepts: unique keys and names, rows of whole blocks, aligned offsets, all data present. */
const honestFile: fc.Arbitrary<Buffer> = fc
    .record({
        entries: fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), honestValue), {
            maxLength: 8,
            selector: ([key]) => key
        }),
        tensors: fc.uniqueArray(
            fc.tuple(
                fc.string({ maxLength: 20 }),
                fc.constantFrom(...honestTypes),
                fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 4 })
            ),
            { maxLength: 5, selector: ([name]) => name }
        )
    })
    .map(({ entries, tensors }) => {
        const usable = entries.filter(([key]) => key !== "general.alignment");
        const raw = ggufStart({ entries: usable.length, tensors: tensors.length });
        for (const [key, { type, write }] of usable) {
            raw.string(key).u32(type);
            write(raw);
        }
        let offset = 0;
        for (const [name, [ggmlType, blockElements, blockBytes], shape] of tensors) {
            const dims = shape.map((size, index) => (index === 0 ? size * blockElements : size));
            const numBlocks = dims.reduce((product, size) => product * size, 1) / blockElements;
            raw.tensor(name, dims, ggmlType, offset);
            offset += Math.ceil((numBlocks * blockBytes) / 32) * 32;
        }
        return raw.padTo(32).bytes(Buffer.alloc(offset)).build();
    });

/** An honest file, then cut short, or with a few bytes flipped. */
const damagedFile: fc.Arbitrary<Buffer> = fc
    .tuple(honestFile, sometimes(fc.nat(), 2), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { maxLength: 2 }))
    .map(([bytes, cut, flips]) => mutate(bytes, cut, flips));

function mutate(bytes: Buffer, cut: number | null, flips: readonly (readonly [number, number])[]): Buffer {
    const result = cut === null ? Buffer.from(bytes) : Buffer.from(bytes.subarray(0, cut % (bytes.length + 1)));
    for (const [at, mask] of flips) {
        if (result.length > 0) {
            result[at % result.length]! ^= mask;
        }
    }
    return result;
}

/**
 * An honest file with one array that claims more elements than follow: a few, thousands (enough to
 * exhaust a heap if believed), or 2^40 and more; its true elements and the rest of the file after it.
 */
const lyingArrayFile: fc.Arbitrary<Buffer> = fc
    .tuple(honestFile, fc.constantFrom(...fixedTypes, T.string), hugeCount, fc.nat({ max: 64 }))
    .map(([honest, elementType, count, numTrue]) => {
        const lie = ggufStart({ entries: 1 }).entry("tokenizer.ggml.tokens", T.array, (raw) => {
            raw.u32(elementType).u64(count);
            for (let index = 0; index < numTrue; index++) {
                if (elementType === T.string) {
                    raw.string("tok");
                } else {
                    raw.bytes(Buffer.alloc(fixedSizes[elementType]!, index));
                }
            }
        });
        return Buffer.concat([lie.build(), honest.subarray(24)]);
    });

/** Honest, damaged and adversarial files, so that every check is reached, and passed. */
export const ggufFile: fc.Arbitrary<Buffer> = fc.oneof(
    { weight: 2, arbitrary: honestFile },
    { weight: 3, arbitrary: damagedFile },
    { weight: 2, arbitrary: lyingArrayFile },
    { weight: 4, arbitrary: adversarialFile }
);
