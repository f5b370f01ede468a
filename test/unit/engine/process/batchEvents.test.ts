import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../../../../contract/engineProtocol.js";
import { batchEvents } from "../../../../engine/process/batchEvents.js";
import type { EngineTransport } from "../../../../engine/process/EngineTransport.js";

/** A transport that records what was handed to the channel, each send settling when the test says. */
class RecordingTransport implements EngineTransport {
    readonly kind = "fork";
    readonly sent: EngineEvent[] = [];
    readonly #handedOver: (() => void)[] = [];
    onMessage(): void {}
    onHostGone(): void {}
    send(event: EngineEvent): Promise<void> {
        this.sent.push(event);
        return new Promise((resolve) => this.#handedOver.push(resolve));
    }
    handOverAll(): void {
        for (const resolve of this.#handedOver.splice(0)) {
            resolve();
        }
    }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/** Past the turn after this one: when a batch begun in this turn has left. */
const afterFlush = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
const token = (requestId: string, text: string): EngineEvent => ({ type: "text", requestId, text });

describe("batchEvents", () => {
    it("sends one turn's events as one batch in their order, and a lone event as itself", async () => {
        const inner = new RecordingTransport();
        const transport = batchEvents(inner);
        void transport.send(token("a", "1"));
        void transport.send(token("b", "1"));
        void transport.send({ type: "started", requestId: "c" });
        expect(inner.sent).toEqual([]); // nothing leaves before the turn's callbacks have run
        await afterFlush();
        expect(inner.sent).toEqual([{ type: "batch", events: [token("a", "1"), token("b", "1"), { type: "started", requestId: "c" }] }]);

        void transport.send(token("a", "2"));
        await afterFlush();
        expect(inner.sent.at(-1)).toEqual(token("a", "2"));
        expect(inner.sent).toHaveLength(2);
    });

    it("resolves each send once its message is handed to the channel, not before", async () => {
        const inner = new RecordingTransport();
        const transport = batchEvents(inner);
        const settled: string[] = [];
        void transport.send(token("a", "1")).then(() => settled.push("a"));
        void transport.send(token("b", "1")).then(() => settled.push("b"));
        await afterFlush();
        await Promise.resolve();
        expect(settled).toEqual([]);
        inner.handOverAll();
        await nextTurn();
        expect(settled).toEqual(["a", "b"]);
    });

    it("leaves after what the same turn queued after it: node-llama-cpp's dispatch of the next decode step goes first", async () => {
        const inner = new RecordingTransport();
        const transport = batchEvents(inner);
        const order: string[] = [];
        void transport.send(token("a", "1")); // the token, delivered up through the generators
        setImmediate(() => order.push(`dispatch with ${inner.sent.length} sent`)); // LlamaContext._scheduleDecode, queued after it
        await afterFlush();
        expect(order).toEqual(["dispatch with 0 sent"]);
        expect(inner.sent).toEqual([token("a", "1")]);
    });
});
