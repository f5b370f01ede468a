import type { IncomingMessage } from "node:http";
import { OpenAiError } from "./OpenAiError.js";

/**
 * The request's URL. The target is parsed as a path of this server ("//evil/x" is the path
 * "//evil/x", never the host "evil"), or in absolute form as HTTP/1.1 allows; one that cannot be
 * parsed is a 400, never a 500.
 */
export function parseRequestUrl(request: Pick<IncomingMessage, "url">): URL {
    const target = request.url ?? "/";
    try {
        return target.startsWith("/") ? new URL(`http://localhost${target}`) : new URL(target);
    } catch {
        throw new OpenAiError(
            400,
            `The request target ${JSON.stringify(target.slice(0, 100))} is not a URL; send a path such as /v1/models.`,
            "invalid_request_error",
            "invalid_url"
        );
    }
}

/** A URL path, decoded; a malformed %-escape ("%E0%A4%A", "%zz") is a 400 that says what is wrong. */
export function decodePath(pathname: string): string {
    try {
        return decodeURIComponent(pathname);
    } catch {
        const bad = /%(?![0-9a-f]{2})/i.exec(pathname);
        const why =
            bad !== null
                ? `a % at character ${bad.index + 1} that is not followed by two hex digits`
                : "%-escapes that are not UTF-8 (%C3%A9 is é)";
        throw new OpenAiError(
            400,
            `The path ${JSON.stringify(pathname.slice(0, 100))} has ${why}; escape a literal % as %25.`,
            "invalid_request_error",
            "invalid_url"
        );
    }
}
