// Every answer the probe reads (a model list, /props, a completion, an error body) goes through
// this one reader, bounded: the server under audit is untrusted, and an endless or huge body must
// end the exchange with a named error, not grow the probe (or the Kvault host running it) without end.
// The time bound is the request's own signal, which covers the body as well as the headers.

/** Bytes of one answer the probe reads at most: far above any model list or completion it asks for. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** An answer ran past the byte cap; the probe stopped reading it. The message has no final stop: callers embed it. */
export class ProbeAnswerTooLargeError extends Error {
    readonly code = "probe_answer_too_large";

    constructor(
        readonly url: string,
        readonly numBytesRead: number,
        readonly maxBytes: number
    ) {
        super(
            `${url} sent an answer of more than ${maxBytes.toLocaleString("en-US")} bytes (${numBytesRead.toLocaleString("en-US")} read); the probe reads no more of one answer and stopped there`
        );
    }
}

/** The body as text (invalid UTF-8 replaced), at most `maxBytes`; more is ProbeAnswerTooLargeError, and the body is cancelled. */
export async function readAnswerText(response: Response, url: string, maxBytes: number = MAX_ANSWER_BYTES): Promise<string> {
    const reader = response.body?.getReader();
    if (reader === undefined) {
        return "";
    }
    const decoder = new TextDecoder();
    let text = "";
    let numBytesRead = 0;
    try {
        for (;;) {
            const { done, value } = await reader.read();
            if (done) {
                return text + decoder.decode();
            }
            numBytesRead += value.byteLength;
            if (numBytesRead > maxBytes) {
                throw new ProbeAnswerTooLargeError(url, numBytesRead, maxBytes);
            }
            text += decoder.decode(value, { stream: true });
        }
    } finally {
        await reader.cancel().catch(() => undefined);
    }
}
