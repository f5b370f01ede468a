// What can be wrong with a GGUF file, found by reading its header: the host's model library and
// the synthetic models' tools read the same files with the same reader, so its errors live beside it.
import { KvaultError } from "../engine/core/KvaultError.js";

/** The model file does not exist, is not a file, or could not be read (or its header is cut short). */
export class ModelUnreadableError extends KvaultError {
    readonly code = "model_unreadable";
}

/** The file is readable but is not a GGUF file (it does not start with "GGUF"). */
export class ModelNotGgufError extends KvaultError {
    readonly code = "model_not_gguf";
}

/** A GGUF file this engine cannot run: not a text-generation model, no tokenizer, an architecture llama.cpp does not know. */
export class ModelUnsupportedError extends KvaultError {
    readonly code = "model_unsupported";
}
