/**
 * Base of every domain error a caller can see. `code` is stable and machine-readable
 * (the HTTP API maps it to OpenAI's error shape); `message` says what happened, the numbers,
 * and what to do.
 */
export abstract class KvaultError extends Error {
    abstract readonly code: string;

    constructor(message: string, options?: { cause?: unknown }) {
        super(message, options);
        this.name = new.target.name;
    }
}
