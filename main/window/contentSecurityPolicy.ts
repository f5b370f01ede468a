// The renderer's Content-Security-Policy, in one place. Main sends it as a response header;
// renderer/index.html carries the production policy in a meta tag as well, because header
// delivery is not guaranteed for file: pages on every Electron version. A unit test keeps
// the two equal, and the dev build swaps the meta tag for the development policy.

export type PolicyMode = "production" | "development";

const productionDirectives: readonly string[] = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'"
];

// Vite's dev server injects an inline React Refresh preamble and loads CSS through <style>
// elements, so development must allow inline scripts and styles. HMR's WebSocket is on the
// page's own host and port, which 'self' covers.
const developmentOverrides: Readonly<Record<string, string>> = {
    "script-src": "script-src 'self' 'unsafe-inline'",
    "style-src": "style-src 'self' 'unsafe-inline'"
};

export function contentSecurityPolicy(mode: PolicyMode): string {
    const directives =
        mode === "production"
            ? productionDirectives
            : productionDirectives.map((directive) => developmentOverrides[directiveName(directive)] ?? directive);
    return directives.join("; ");
}

function directiveName(directive: string): string {
    return directive.split(" ", 1)[0] ?? directive;
}
