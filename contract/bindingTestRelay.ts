// The binding-test relay between the desktop app's engine process and Electron main (docs/backends.md,
// "The engine's binary test"). node-llama-cpp tests a prebuilt llama.cpp binary in a child
// process before loading it (always on Linux, for GPU builds on Windows). Inside the engine's
// utilityProcess it can only use child_process.fork, which needs Electron's RunAsNode fuse, and
// Kvault ships with that fuse off. So the engine asks main, over a private local socket, to fork
// the test as a utilityProcess, and the two relay the test's messages. Newline-delimited JSON,
// one connection per test; both ends bound every line before they parse it.

/** The environment variable through which main gives an engine process the relay's address, as JSON. */
export const BINDING_TEST_RELAY_ENV = "KVAULT_BINDING_TEST_RELAY";

export interface BindingTestRelayAddress {
    /** A Unix socket in a private (0700) folder, or a Windows named pipe. */
    readonly path: string;
    /** 48 hex characters; the first line of every connection must carry it. */
    readonly token: string;
}

/** engine → main, the first line: fork this module (main forks only node-llama-cpp's test file). */
export interface RelayHello {
    readonly token: string;
    readonly modulePath: string;
}

/** engine → main after the hello: one message for the test process. Closing the connection kills it. */
export interface RelayToTest {
    readonly message: unknown;
}

/** main → engine. */
export type RelayFromTest =
    | { readonly spawned: { readonly pid: number | null } }
    | { readonly message: unknown }
    /** The test process ended; main closes the connection after this line. */
    | { readonly exit: number | null }
    /** Main would not fork: a wrong token or module, too many tests at once. Closed after this line. */
    | { readonly refused: string };

/** node-llama-cpp's test messages are a few hundred bytes; anything near this is not one. */
export const RELAY_MAX_LINE_CHARS = 64 * 1024;

export function encodeRelayLine(value: RelayHello | RelayToTest | RelayFromTest): string {
    return `${JSON.stringify(value)}\n`;
}

/**
 * Splits a socket's text into JSON lines, bounded: a line longer than RELAY_MAX_LINE_CHARS, or
 * one that is not JSON, ends the stream with `onBad` and nothing after it is parsed.
 */
export class RelayLineReader {
    #buffer = "";
    #bad = false;

    constructor(
        private readonly onValue: (value: unknown) => void,
        private readonly onBad: (problem: string) => void
    ) {}

    push(chunk: string): void {
        if (this.#bad) {
            return;
        }
        this.#buffer += chunk;
        for (let end = this.#buffer.indexOf("\n"); end !== -1 && !this.#bad; end = this.#buffer.indexOf("\n")) {
            const line = this.#buffer.slice(0, end);
            this.#buffer = this.#buffer.slice(end + 1);
            this.#parse(line);
        }
        if (!this.#bad && this.#buffer.length > RELAY_MAX_LINE_CHARS) {
            this.#fail(`a line longer than ${RELAY_MAX_LINE_CHARS.toLocaleString("en-US")} characters`);
        }
    }

    #parse(line: string): void {
        if (line.length > RELAY_MAX_LINE_CHARS) {
            this.#fail(
                `a line of ${line.length.toLocaleString("en-US")} characters (at most ${RELAY_MAX_LINE_CHARS.toLocaleString("en-US")})`
            );
            return;
        }
        let value: unknown;
        try {
            value = JSON.parse(line);
        } catch {
            this.#fail("a line that is not JSON");
            return;
        }
        this.onValue(value);
    }

    #fail(problem: string): void {
        this.#bad = true;
        this.#buffer = "";
        this.onBad(problem);
    }
}

/** The address from the engine's environment; undefined when the host set none, a string saying why when it is unusable. */
export function parseRelayAddress(text: string | undefined): BindingTestRelayAddress | undefined | string {
    if (text === undefined || text === "") {
        return undefined;
    }
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch {
        return `${BINDING_TEST_RELAY_ENV} is not JSON.`;
    }
    const record = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
    if (typeof record.path !== "string" || record.path === "" || typeof record.token !== "string" || !/^[0-9a-f]{48}$/.test(record.token)) {
        return `${BINDING_TEST_RELAY_ENV} must be {"path": a socket path, "token": 48 hex characters}.`;
    }
    return { path: record.path, token: record.token };
}
