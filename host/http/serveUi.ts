import type { IncomingMessage, ServerResponse } from "node:http";
import { SESSION_META, SESSION_TOKEN_FRAGMENT } from "../../contract/browserLogin.js";
import { sendText } from "./httpResponses.js";
import type { LoginSessions } from "./LoginSessions.js";
import { serveRendererFile } from "./serveRendererFile.js";

/** What a used (or never issued) login link opens. */
const USED_LOGIN_LINK_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Kvault: this login link was used</title></head>
<body>
<h1>This login link was used already</h1>
<p>Each login link Kvault prints works once, in one browser. Open the newest line
<code>Kvault login link (works once): http://…/?token=…</code> in the output of <code>npm run serve</code>:
a new link is printed each time one is used. A link from before the server restarted does not work any more.</p>
</body>
</html>
`;

/**
 * The renderer. `/?token=…` with the current login token sets a session cookie and sends the
 * browser to `/#kvault-session-token=<RPC token>`: the login token leaves the address bar, and the
 * page keeps the RPC token (a fragment is never sent to a server) and takes it out of the address.
 * A used or unknown token gets a page that says where the next link is, unless the browser already
 * has a session. The index page says, in a meta tag, whether this browser has a session (never a
 * secret): without one the app explains where to find the login link.
 */
export function serveUi(
    request: IncomingMessage,
    url: URL,
    response: ServerResponse,
    rendererDirectory: string,
    sessions: LoginSessions
): void {
    const loggedIn = sessions.hasSession(request.headers.cookie);
    if (url.pathname === "/" && url.searchParams.has("token")) {
        const session = sessions.redeem(url.searchParams.get("token") ?? "");
        if (session === undefined && !loggedIn) {
            response.setHeader("Cache-Control", "no-store");
            return sendText(response, 403, USED_LOGIN_LINK_PAGE, "text/html; charset=utf-8");
        }
        if (session !== undefined) {
            response.setHeader("Set-Cookie", sessions.sessionCookie(session.id));
        }
        const location = session === undefined ? "/" : `/#${SESSION_TOKEN_FRAGMENT}=${session.rpcToken}`;
        response.writeHead(303, { Location: location, "Cache-Control": "no-store", "Content-Length": 0 });
        return void response.end();
    }
    const meta = `<meta name="${SESSION_META}" content="${loggedIn ? "active" : "none"}">`;
    serveRendererFile(rendererDirectory, url.pathname, response, meta);
}
