import type { EngineEvent } from "../../contract/engineProtocol.js";
import type { EngineTransport } from "./EngineTransport.js";

/**
 * `transport`, with the events sent in one turn of the event loop leaving together, in order:
 * one event as itself, more as one `batch` message. A decode step of eight sequences resolves
 * eight tokens in one turn; unbatched, each was a write on the channel and a wake of the host's
 * process, CPU the compute threads lack on a small machine.
 *
 * The batch leaves in the turn after (two setImmediates), not at the end of its own: node-llama-cpp
 * dispatches a sequence's next decode step with a setImmediate (LlamaContext._scheduleDecode)
 * queued once its token has come up through the generators, after the one its send queued. Sent
 * at the end of its own turn, the write woke the host, which took a core before the next step was
 * started; sent a turn later, the host runs while the step computes, and tokens come a little
 * closer together (docs/measurements.md).
 * Each send resolves when its message is handed to the channel.
 */
export function batchEvents(transport: EngineTransport): EngineTransport {
    let pending: { readonly event: EngineEvent; readonly sent: () => void }[] = [];
    const flush = (): void => {
        const batch = pending;
        pending = [];
        const message: EngineEvent = batch.length === 1 ? batch[0]!.event : { type: "batch", events: batch.map(({ event }) => event) };
        void transport.send(message).then(() => {
            for (const { sent } of batch) {
                sent();
            }
        });
    };
    return {
        kind: transport.kind,
        onMessage: (listener) => transport.onMessage(listener),
        onHostGone: (listener) => transport.onHostGone(listener),
        send(event) {
            return new Promise((resolve) => {
                if (pending.length === 0) {
                    setImmediate(() => setImmediate(flush));
                }
                pending.push({ event, sent: resolve });
            });
        }
    };
}
