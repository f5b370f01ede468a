import { LOGOUT_PATH, SESSION_TOKEN_FRAGMENT, SESSION_TOKEN_HEADER } from "../../contract/browserLogin.js";

/**
 * Where the page keeps its login session's RPC token. localStorage belongs to this origin alone
 * (scheme, host and port), unlike the session cookie, which the browser sends to every port of
 * the host: a page or server on another port never reads it (host/http/LoginSessions.ts).
 */
const STORAGE_KEY = "kvault.sessionToken";

/** The shape of an RPC token the server makes: 256 random bits, hex. */
const TOKEN_SHAPE = /^[0-9a-f]{64}$/;

/**
 * Moves the RPC token that the login's redirect put in the address (`#kvault-session-token=…`)
 * into localStorage, and takes it out of the address and the history entry. Returns the token
 * the page now holds, if any.
 */
export function takeSessionToken(page: Pick<Location, "hash" | "pathname" | "search"> = location): string | undefined {
    const given = new URLSearchParams(page.hash.replace(/^#/, "")).get(SESSION_TOKEN_FRAGMENT);
    if (given !== null) {
        history.replaceState(history.state, "", `${page.pathname}${page.search}`);
        if (TOKEN_SHAPE.test(given)) {
            storage()?.setItem(STORAGE_KEY, given);
        }
    }
    return sessionToken();
}

/** The RPC token this page holds, or undefined (never logged in here, logged out, or storage blocked). */
export function sessionToken(): string | undefined {
    const token = storage()?.getItem(STORAGE_KEY) ?? undefined;
    return token !== undefined && TOKEN_SHAPE.test(token) ? token : undefined;
}

/** Forgets the token: the server said this browser has no session. */
export function forgetSessionToken(): void {
    storage()?.removeItem(STORAGE_KEY);
}

/**
 * Ends this browser's session on the server (its cookie cleared there, its RPC connections
 * closed) and forgets the token; then the page reloads, logged out. Without the token, or with the
 * server unreachable, the token is forgotten all the same: the cookie alone opens nothing.
 */
export async function logOut(): Promise<void> {
    const token = sessionToken();
    try {
        if (token !== undefined) {
            await fetch(LOGOUT_PATH, { method: "POST", headers: { [SESSION_TOKEN_HEADER]: token }, credentials: "same-origin" });
        }
    } finally {
        forgetSessionToken();
        location.replace("/");
    }
}

/** The page's localStorage, where it has one (a browser may block it). */
function storage(): Storage | undefined {
    try {
        return typeof localStorage === "undefined" ? undefined : localStorage;
    } catch {
        return undefined;
    }
}
