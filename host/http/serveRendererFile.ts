import fs from "node:fs";
import type { ServerResponse } from "node:http";
import path from "node:path";
import { OpenAiError } from "./OpenAiError.js";
import { decodePath } from "./requestUrl.js";

const CONTENT_TYPES: Record<string, string> = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".woff2": "font/woff2"
};

/**
 * Answers a GET of the built renderer: a file under `root`, never one outside it (a 404), and for
 * `/` the index page with `headMarkup` added to its head (never cached: it describes this visit).
 */
export function serveRendererFile(root: string, pathname: string, response: ServerResponse, headMarkup: string): void {
    const resolvedRoot = path.resolve(root);
    const relative = pathname === "/" ? "index.html" : decodePath(pathname).replace(/^\/+/, "");
    const filePath = path.resolve(resolvedRoot, relative);
    if (!filePath.startsWith(resolvedRoot + path.sep) || !fs.existsSync(filePath) || !fs.statSync(filePath).isFile()) {
        throw new OpenAiError(404, `Nothing at ${pathname.slice(0, 200)}.`, "not_found_error", "not_found");
    }
    let content = fs.readFileSync(filePath);
    if (relative === "index.html") {
        content = Buffer.from(content.toString("utf8").replace("</head>", `${headMarkup}\n</head>`));
        response.setHeader("Cache-Control", "no-store");
    }
    response.writeHead(200, {
        "Content-Type": CONTENT_TYPES[path.extname(filePath)] ?? "application/octet-stream",
        "Content-Length": content.length
    });
    response.end(content);
}
