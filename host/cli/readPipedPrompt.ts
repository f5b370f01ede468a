import { StringDecoder } from "node:string_decoder";
import { turnLimits } from "../../contract/limits.js";
import { CliError } from "./CliError.js";
import { exitCodes } from "./exitCodes.js";

/** The most text `kvault run` takes from a pipe: one message's content, the largest prompt the server accepts (contract/limits.ts). */
export const MAX_PIPED_PROMPT_CHARS = turnLimits.maxMessageChars;

/**
 * All of `input` as text, read until its end or until it is over MAX_PIPED_PROMPT_CHARS: then the
 * read stops (a pipe that never ends, `yes | kvault run`, cannot fill the memory) and a CliError
 * says how much was read, the limit and what to do. Counted in UTF-16 code units, as the server counts.
 */
export async function readPipedPrompt(input: NodeJS.ReadableStream, maxChars: number = MAX_PIPED_PROMPT_CHARS): Promise<string> {
    const decoder = new StringDecoder("utf8");
    const parts: string[] = [];
    let numChars = 0;
    let numBytes = 0;
    for await (const chunk of input) {
        const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
        numBytes += bytes.length;
        const text = decoder.write(bytes);
        numChars += text.length;
        if (numChars > maxChars) {
            throw new PipedPromptTooLargeError(numChars, numBytes, maxChars);
        }
        parts.push(text);
    }
    const rest = decoder.end();
    if (numChars + rest.length > maxChars) {
        throw new PipedPromptTooLargeError(numChars + rest.length, numBytes, maxChars);
    }
    parts.push(rest);
    return parts.join("");
}

/** The text piped into `kvault run` is over MAX_PIPED_PROMPT_CHARS; `numCharsRead` counts what was read before it stopped. */
export class PipedPromptTooLargeError extends CliError {
    constructor(
        readonly numCharsRead: number,
        readonly numBytesRead: number,
        readonly maxChars: number
    ) {
        super(
            `The text piped in is over ${maxChars.toLocaleString("en-US")} characters, the most Kvault takes in one message ` +
                `(it stopped reading at ${numCharsRead.toLocaleString("en-US")} characters, ${numBytesRead.toLocaleString("en-US")} bytes). ` +
                "Pipe a shorter text, or split it into parts and send each in its own run.",
            "piped_prompt_too_large",
            exitCodes.usage
        );
    }
}
