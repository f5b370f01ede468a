import { KvaultError } from "../core/KvaultError.js";

/** The configured draft model cannot draft for the model: another tokenizer, or a file that does not load. */
export class DraftModelError extends KvaultError {
    readonly code = "draft_model_unfit";
}
