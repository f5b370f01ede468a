/** The most bytes one event may hold before the stream is called malformed (an answer's chunk is far smaller). */
const MAX_EVENT_BYTES = 1024 * 1024;

/**
 * The `data:` payloads of a text/event-stream body, in order, until `[DONE]` or the end. A line
 * longer than MAX_EVENT_BYTES without an event's end is an error, never an unbounded buffer.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of body) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.search(/\r?\n\r?\n/)) >= 0) {
            const event = buffered.slice(0, end);
            buffered = buffered.slice(end).replace(/^\r?\n\r?\n/, "");
            const data = event
                .split(/\r?\n/)
                .filter((line) => line.startsWith("data:"))
                .map((line) => line.slice(5).trimStart())
                .join("\n");
            if (data === "[DONE]") {
                return;
            }
            if (data !== "") {
                yield data;
            }
        }
        if (buffered.length > MAX_EVENT_BYTES) {
            throw new Error(`An event of the stream is over ${MAX_EVENT_BYTES.toLocaleString("en-US")} bytes without its end.`);
        }
    }
}
