// A backend that misbehaves on purpose, on loopback: it pours one chunk again and again into a
// response, honouring its own socket's backpressure, and counts what it managed to send. The
// tests of the gateway and the leak probe put Kvault in front of it and count what got through.
import type http from "node:http";
import type { AddressInfo } from "node:net";

/** What one pour sent so far, in bytes; whether it is waiting now for the reader to take more; whether it sent all it was to. */
export interface PourCount {
    numBytesSent: number;
    waiting: boolean;
    pouredAll: boolean;
}

/**
 * Writes `chunk` into `response` until `maxBytes` have gone (then ends it) or the reader goes away;
 * a full socket buffer makes it wait for `drain`, as a real server's writer does.
 */
export async function pour(response: http.ServerResponse, chunk: string, maxBytes: number, count: PourCount): Promise<void> {
    const numChunkBytes = Buffer.byteLength(chunk);
    while (count.numBytesSent < maxBytes && !response.destroyed) {
        count.numBytesSent += numChunkBytes;
        if (!response.write(chunk)) {
            count.waiting = true;
            await new Promise<void>((resolve) => {
                const done = (): void => {
                    response.off("drain", done);
                    response.off("close", done);
                    resolve();
                };
                response.on("drain", done);
                response.on("close", done);
            });
            count.waiting = false;
        }
    }
    if (!response.destroyed) {
        count.pouredAll = true;
        response.end();
    }
}

/** Listens on a free loopback port; resolves with `http://127.0.0.1:PORT`. */
export async function listenOnLoopback(server: http.Server): Promise<string> {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes `server` and every connection it holds. */
export async function closeServer(server: http.Server): Promise<void> {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
}
