import crypto from "node:crypto";

/** Sessions kept at once; a login past this many ends the oldest (its page asks for a login link again). */
const DEFAULT_MAX_SESSIONS = 32;

/**
 * The browser's way in, as Jupyter's and VS Code's servers do it: the server prints a one-time
 * login link (`/?token=…`) where only whoever started it can see it (its stdout); opening it
 * trades the token for a session cookie (HttpOnly, SameSite=Strict) and a new token, printed in
 * turn. The page itself carries no secret, so any local process may fetch it; the RPC WebSocket
 * takes the cookie (or, for API clients, the API key). Sessions live in memory: a restarted
 * server asks for a new login.
 */
export class LoginSessions {
    /** The cookie's name carries the port: browsers send 127.0.0.1's cookies to every port, and two servers must not overwrite each other's. */
    readonly cookieName: string;
    #token = newSecret();
    /** Session ids, oldest first. */
    readonly #sessions = new Set<string>();

    constructor(
        port: number,
        /** Called with each new token after the first (one was just used). */
        private readonly onNewToken: (token: string) => void,
        private readonly maxSessions = DEFAULT_MAX_SESSIONS
    ) {
        this.cookieName = `kvault_session_${port}`;
    }

    /** The token the current login link carries. */
    get token(): string {
        return this.#token;
    }

    /**
     * Trades the current token for a new session: its id, or undefined when `given` is not the
     * current token (used already, or never issued). A used token is replaced at once, and the
     * replacement announced.
     */
    redeem(given: string): string | undefined {
        const expected = Buffer.from(this.#token);
        const offered = Buffer.from(given);
        if (offered.length !== expected.length || !crypto.timingSafeEqual(offered, expected)) {
            return undefined;
        }
        this.#token = newSecret();
        const id = newSecret();
        this.#sessions.add(id);
        for (const oldest of this.#sessions) {
            if (this.#sessions.size <= this.maxSessions) {
                break;
            }
            this.#sessions.delete(oldest);
        }
        this.onNewToken(this.#token);
        return id;
    }

    /** Whether a request's Cookie header carries one of this server's live sessions. */
    hasSession(cookieHeader: string | undefined): boolean {
        const id = readCookie(cookieHeader, this.cookieName);
        return id !== undefined && this.#sessions.has(id);
    }

    /** The Set-Cookie value for a session: sent only to this server's own pages (SameSite=Strict), never readable by scripts (HttpOnly). */
    sessionCookie(id: string): string {
        return `${this.cookieName}=${id}; Path=/; HttpOnly; SameSite=Strict`;
    }
}

/** The value of cookie `name` in a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
    for (const pair of (header ?? "").split(";")) {
        const separator = pair.indexOf("=");
        if (separator > 0 && pair.slice(0, separator).trim() === name) {
            return pair.slice(separator + 1).trim();
        }
    }
    return undefined;
}

/** 256 random bits, hex. */
function newSecret(): string {
    return crypto.randomBytes(32).toString("hex");
}
