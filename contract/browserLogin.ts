// The names the headless server and its page share for a browser's login session (host/http/LoginSessions.ts,
// renderer/rpc/browserSession.ts): one place, so the two ends cannot drift.

/** The index page's meta tag: "active" when the request carried a live session cookie, "none" when not. Never a secret. */
export const SESSION_META = "kvault-session";

/** The login's redirect hands the page its RPC token in the address's fragment (`/#kvault-session-token=…`), which is never sent to a server. */
export const SESSION_TOKEN_FRAGMENT = "kvault-session-token";

/** The query parameter of `/rpc` that carries the page's RPC token beside the session cookie (a browser cannot set a WebSocket's headers). */
export const SESSION_TOKEN_PARAM = "session_token";

/** The header that carries the RPC token on the page's own HTTP requests (log out). */
export const SESSION_TOKEN_HEADER = "X-Kvault-Session-Token";

/** POST here with the session cookie and the token header ends the session (204, the cookie cleared). */
export const LOGOUT_PATH = "/logout";
