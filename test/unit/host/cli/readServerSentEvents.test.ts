import { describe, expect, it } from "vitest";
import { readServerSentEvents } from "../../../../host/cli/readServerSentEvents.js";

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
    return new ReadableStream({
        start(controller) {
            for (const chunk of chunks) {
                controller.enqueue(new TextEncoder().encode(chunk));
            }
            controller.close();
        }
    });
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<string[]> {
    const events: string[] = [];
    for await (const data of readServerSentEvents(stream)) {
        events.push(data);
    }
    return events;
}

describe("readServerSentEvents", () => {
    it("yields each event's data across chunk boundaries and CRLF, and stops at [DONE]", async () => {
        expect(await collect(streamOf('data: {"a"', ":1}\n\ndata: two\r\n\r\n: comment\n\n", "data: [DONE]\n\ndata: after\n\n"))).toEqual([
            '{"a":1}',
            "two"
        ]);
    });

    it("refuses an event that grows past its bound without ending", async () => {
        await expect(collect(streamOf(`data: ${"x".repeat(1024 * 1024 + 10)}`))).rejects.toThrow(/without its end/);
    });
});
