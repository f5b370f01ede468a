import crypto from "node:crypto";

/** Sessions kept at once; a login past this many ends the oldest (its page asks for a login link again). */
const DEFAULT_MAX_SESSIONS = 32;

/** How long a browser's login session lasts (ms); both documented in docs/headless.md. */
export const loginSessionLifetimes = {
    /** A session ends once this long passes with no page load and no RPC connection open: a tab left closed overnight logs in again. */
    idleMs: 12 * 60 * 60 * 1000,
    /** A session ends this long after its login however busy it is, its open RPC connections with it: a stolen one does not last. */
    absoluteMs: 7 * 24 * 60 * 60 * 1000
} as const;

export interface LoginSessionsOptions {
    readonly maxSessions?: number;
    readonly lifetimes?: { readonly idleMs: number; readonly absoluteMs: number };
    /** The clock (ms); a test moves it instead of waiting. */
    readonly now?: () => number;
}

interface LoginSession {
    /** The second half of the credential: only the page this server's login sent it to holds it (its origin's localStorage). */
    readonly rpcToken: string;
    readonly loggedInAt: number;
    lastUsedAt: number;
    /** What closes each RPC connection open on this session: while any is open, the session is in use. */
    readonly connections: Set<() => void>;
}

/**
 * The browser's way in, as Jupyter's and VS Code's servers do it: the server prints a one-time
 * login link (`/?token=…`) where only whoever started it can see it (its stdout); opening it
 * trades the token for a session: a cookie (HttpOnly, SameSite=Strict) and an RPC token, which the
 * login's redirect hands to the page in the address's fragment and the page keeps in its origin's
 * localStorage. Browsers send 127.0.0.1's cookies to every port, so another local server receives
 * the cookie; it never sees the RPC token, which no other origin can read, and /rpc takes only
 * both together from this server's own origin. Sessions end when idle, when old, or on log out,
 * and live in memory: a restarted server asks for a new login.
 */
export class LoginSessions {
    /** The port keeps two servers' cookies apart; the random part keeps a restarted server on the same port from reading an old one. */
    readonly cookieName: string;
    #token = newSecret();
    /** By session id (the cookie's value), oldest login first. */
    readonly #sessions = new Map<string, LoginSession>();
    readonly #maxSessions: number;
    readonly #lifetimes: { readonly idleMs: number; readonly absoluteMs: number };
    readonly #now: () => number;

    constructor(
        port: number,
        /** Called with each new token after the first (one was just used). */
        private readonly onNewToken: (token: string) => void,
        options: LoginSessionsOptions = {}
    ) {
        this.cookieName = `kvault_session_${port}_${crypto.randomBytes(4).toString("hex")}`;
        this.#maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
        this.#lifetimes = options.lifetimes ?? loginSessionLifetimes;
        this.#now = options.now ?? Date.now;
    }

    /** The token the current login link carries. */
    get token(): string {
        return this.#token;
    }

    /**
     * Trades the current token for a new session: its id and RPC token, or undefined when `given`
     * is not the current token (used already, or never issued). A used token is replaced at once,
     * and the replacement announced.
     */
    redeem(given: string): { id: string; rpcToken: string } | undefined {
        if (!sameSecret(given, this.#token)) {
            return undefined;
        }
        this.#token = newSecret();
        const id = newSecret();
        const now = this.#now();
        const session: LoginSession = { rpcToken: newSecret(), loggedInAt: now, lastUsedAt: now, connections: new Set() };
        this.#sessions.set(id, session);
        for (const oldest of [...this.#sessions.keys()].slice(0, Math.max(0, this.#sessions.size - this.#maxSessions))) {
            this.end(oldest);
        }
        this.onNewToken(this.#token);
        return { id, rpcToken: session.rpcToken };
    }

    /** The id of the live session a request's Cookie header carries, now counted as used; undefined when none. */
    find(cookieHeader: string | undefined): string | undefined {
        this.sweep();
        const id = readCookie(cookieHeader, this.cookieName);
        const session = id === undefined ? undefined : this.#sessions.get(id);
        if (id === undefined || session === undefined) {
            return undefined;
        }
        session.lastUsedAt = this.#now();
        return id;
    }

    hasSession(cookieHeader: string | undefined): boolean {
        return this.find(cookieHeader) !== undefined;
    }

    /** The session id when the cookie's session is live and `rpcToken` is its RPC token; undefined otherwise. */
    authorize(cookieHeader: string | undefined, rpcToken: string): string | undefined {
        const id = this.find(cookieHeader);
        return id !== undefined && sameSecret(rpcToken, this.#sessions.get(id)!.rpcToken) ? id : undefined;
    }

    /**
     * Counts an RPC connection open on session `id` (in use, never idle, while open) until the
     * returned function is called; `close` ends the connection when the session ends first.
     */
    hold(id: string, close: () => void): () => void {
        const session = this.#sessions.get(id);
        if (session === undefined) {
            close();
            return () => undefined;
        }
        session.connections.add(close);
        return () => {
            if (session.connections.delete(close)) {
                session.lastUsedAt = this.#now();
            }
        };
    }

    /** Ends session `id` (log out, expiry): its cookie and RPC token open nothing any more, and its open RPC connections close. Idempotent. */
    end(id: string): void {
        const session = this.#sessions.get(id);
        if (session !== undefined) {
            this.#sessions.delete(id);
            for (const close of [...session.connections]) {
                close();
            }
        }
    }

    /** Ends every session past its absolute lifetime, and every one idle (no connection open) past its idle lifetime. */
    sweep(): void {
        const now = this.#now();
        for (const [id, session] of [...this.#sessions]) {
            const idle = session.connections.size === 0 && now - session.lastUsedAt >= this.#lifetimes.idleMs;
            if (idle || now - session.loggedInAt >= this.#lifetimes.absoluteMs) {
                this.end(id);
            }
        }
    }

    /** The Set-Cookie value for a session: sent only to this server's own pages (SameSite=Strict), never readable by scripts (HttpOnly). */
    sessionCookie(id: string): string {
        return `${this.cookieName}=${id}; Path=/; HttpOnly; SameSite=Strict`;
    }

    /** The Set-Cookie value that removes the session cookie (log out). */
    clearedCookie(): string {
        return `${this.cookieName}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
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

function sameSecret(given: string, expected: string): boolean {
    const offered = Buffer.from(given);
    const wanted = Buffer.from(expected);
    return offered.length === wanted.length && crypto.timingSafeEqual(offered, wanted);
}

/** 256 random bits, hex. */
function newSecret(): string {
    return crypto.randomBytes(32).toString("hex");
}
