// The synthetic models write metadata as tagged values (engine/gguf/ggufTypes.ts's GgufValue);
// gguf/'s bounded reader hands back plain values and their type ids. This turns one into the other,
// so a vocabulary read from a file can be written into a generated model as it was.
import { GgufValueType, type GgufValue } from "../../engine/gguf/ggufTypes.js";
import { readGgufHeader, type GgufMetadataType, type GgufMetadataValue } from "../../gguf/index.js";

/** A value of a type the writer does not produce (u8, f64, arrays of bools, ...): kept as its type ids only. */
export interface UnsupportedGgufValue {
    readonly type: "unsupported";
    readonly valueType: number;
    readonly itemType?: number;
}

export type TaggedGgufValue = GgufValue | UnsupportedGgufValue;

/** `value` as the writer's tagged value, by its type ids from the header. */
export function taggedGgufValue(value: GgufMetadataValue, { type, elementType }: GgufMetadataType): TaggedGgufValue {
    switch (type) {
        case GgufValueType.UInt16:
            return { type: "u16", value: value as number };
        case GgufValueType.UInt32:
            return { type: "u32", value: value as number };
        case GgufValueType.Int32:
            return { type: "i32", value: value as number };
        case GgufValueType.UInt64:
            return { type: "u64", value: value as bigint };
        case GgufValueType.Float32:
            return { type: "f32", value: value as number };
        case GgufValueType.Bool:
            return { type: "bool", value: value as boolean };
        case GgufValueType.String:
            return { type: "string", value: value as string };
        case GgufValueType.Array:
            switch (elementType) {
                case GgufValueType.String:
                    return { type: "string[]", value: value as readonly string[] };
                case GgufValueType.Float32:
                    return { type: "f32[]", value: value as Float32Array };
                case GgufValueType.Int32:
                    return { type: "i32[]", value: value as Int32Array };
                default:
                    return { type: "unsupported", valueType: type, itemType: elementType };
            }
        default:
            return { type: "unsupported", valueType: type };
    }
}

/** The header of the GGUF file at `filePath` (read by gguf/'s bounded reader), its metadata as tagged values, in file order. */
export function readTaggedGgufMetadata(filePath: string): ReadonlyMap<string, TaggedGgufValue> {
    const header = readGgufHeader(filePath);
    const tagged = new Map<string, TaggedGgufValue>();
    for (const [key, value] of header.metadata) {
        tagged.set(key, taggedGgufValue(value, header.metadataTypes.get(key)!));
    }
    return tagged;
}
