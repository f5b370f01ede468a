// Kvault's one GGUF header reader, bounded: model files are untrusted input, so every count and
// length in a header is checked against the bytes the file has before anything is allocated. The
// host's model library and the synthetic models' tools both read through it; it imports only the
// engine's leaf modules (engine/core/), so anyone may import it without a cycle.

export { GGML_TYPE_COUNT, lookUpGgmlType, type GgmlTypeLookup, type GgmlTypeSize } from "./ggmlTypeSizes.js";
export { ModelNotGgufError, ModelUnreadableError, ModelUnsupportedError } from "./ggufFileErrors.js";
export {
    ggufHeaderLimits,
    readGgufHeader,
    type GgufHeader,
    type GgufHeaderLimits,
    type GgufMetadataType,
    type GgufMetadataValue,
    type GgufNumericArray,
    type GgufTensorHeader
} from "./readGgufHeader.js";
