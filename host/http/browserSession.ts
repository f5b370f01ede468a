import type { IncomingMessage, ServerResponse } from "node:http";
import { SESSION_TOKEN_HEADER } from "../../contract/browserLogin.js";
import type { LoginSessions } from "./LoginSessions.js";
import { OpenAiError } from "./OpenAiError.js";
import { checkOwnOrigin } from "./requestGuards.js";

/**
 * The login session of a request from this server's own page: its Origin (present, and this
 * server's), its session cookie and its RPC token must all agree, else a 403 or a 401. The cookie
 * alone is not enough: browsers send it to every port of 127.0.0.1, so another local server may
 * hold it; the token lives only in this origin's page.
 */
export function authorizeBrowser(request: IncomingMessage, sessions: LoginSessions | undefined, rpcToken: string): string {
    checkOwnOrigin(request);
    const id = sessions?.authorize(request.headers.cookie, rpcToken);
    if (id === undefined) {
        throw new OpenAiError(
            401,
            "No live login session: this browser's session ended (logged out, or unused too long, or too old) or never began. " +
                'Open the newest "Kvault login link (works once): http://…/?token=…" in the output of npm run serve.',
            "authentication_error",
            "login_required"
        );
    }
    return id;
}

/** `POST /logout` from the page: ends its session server-side (its open RPC connections close) and clears the cookie; 204. */
export function serveLogout(request: IncomingMessage, response: ServerResponse, sessions: LoginSessions): void {
    const token = request.headers[SESSION_TOKEN_HEADER.toLowerCase()];
    const id = authorizeBrowser(request, sessions, typeof token === "string" ? token : "");
    sessions.end(id);
    response.writeHead(204, { "Set-Cookie": sessions.clearedCookie(), "Cache-Control": "no-store" });
    response.end();
}
