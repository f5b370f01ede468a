/** `name-00001-of-00003.gguf`: a model split into parts, which node-llama-cpp and llama.cpp read together. */
const SPLIT_PART = /-(\d{5})-of-(\d{5})\.gguf$/;

/**
 * Every file node-llama-cpp's reader opens for `modelPath`: the path itself, or, for a part of a
 * split model, all of its parts in order (its own rule, so each can be checked before it reads them).
 */
export function ggufSplitParts(modelPath: string): readonly string[] {
    const match = SPLIT_PART.exec(modelPath);
    if (match === null) {
        return [modelPath];
    }
    const part = Number(match[1]);
    const numParts = Number(match[2]);
    if (part === 0 || numParts === 0 || part > numParts) {
        return [modelPath];
    }
    const stem = modelPath.slice(0, modelPath.length - match[0].length);
    return Array.from({ length: numParts }, (_, index) => `${stem}-${String(index + 1).padStart(5, "0")}-of-${match[2]}.gguf`);
}
