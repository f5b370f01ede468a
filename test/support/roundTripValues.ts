import { decodeTensorValues, encodeTensorValues } from "../../synthetic/gguf/tensorEncoding.js";
import { type GgmlTensorType, tensorDataBytes } from "../../engine/gguf/ggufTypes.js";

/** What `values` become once stored as `type` and read back: the values a file of that type holds. */
export function roundTripValues(type: GgmlTensorType, values: Float32Array): void {
    const bytes = new Uint8Array(tensorDataBytes(type, values.length));
    encodeTensorValues(type, values, bytes);
    decodeTensorValues(type, bytes, values);
}
