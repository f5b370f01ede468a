import { GGML_TYPE_COUNT, lookUpGgmlType } from "../../gguf/ggmlTypeSizes.js";

/** Every type id the header reader knows a size for, to compare with llama.cpp's own. */
export const knownGgmlTypeIds: readonly number[] = Array.from({ length: GGML_TYPE_COUNT }, (_, id) => id).filter(
    (id) => lookUpGgmlType(id).kind === "known"
);
