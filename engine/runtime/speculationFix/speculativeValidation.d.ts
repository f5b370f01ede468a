// The types of speculativeValidation.js, which is plain JavaScript so that the postinstall step runs with node alone.

export declare const speculativeValidationFix: {
    /** The file, beside node-llama-cpp's entry point (dist/index.js). */
    readonly file: string;
    /** The accepted draft's line, after which the fix goes; once in the file. */
    readonly anchor: string;
    /** The line added, marked so that a second run sees it. */
    readonly line: string;
};

/** Whether a LlamaContext.js source has the fix, needs it, or is one the fix does not know. */
export type SpeculativeValidationState = "fixed" | "unfixed" | "unrecognized";

export declare function speculativeValidationState(source: string): SpeculativeValidationState;

/** The source with the fix, indented as the anchor line is; the same source when fixed already. Throws on a file it does not know. */
export declare function fixSpeculativeValidation(source: string): string;

/** The installed node-llama-cpp's LlamaContext.js. */
export declare function installedLlamaContextFile(): string;

/** Whether the installed node-llama-cpp has the fix (read once per process). */
export declare function installedSpeculativeValidation(): SpeculativeValidationState;
