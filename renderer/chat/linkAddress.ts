/**
 * Which addresses in model output may become links. Model output is untrusted: only absolute
 * http and https addresses with a host and no credentials (a `https://bank.example@evil.example`
 * trick names the wrong host), and mailto addresses, are links; anything else (javascript:,
 * data:, file:, relative paths that would move the app's own window, custom schemes that launch
 * programs) stays text. Main checks http(s) again before the desktop app opens anything.
 */

export type LinkAddress =
    | {
          readonly kind: "web";
          /** The address as the URL parser normalizes it (an internationalized host in its xn-- form, so look-alikes show). */
          readonly href: string;
          readonly host: string;
      }
    | { readonly kind: "mail"; readonly href: string; /** Who the mail goes to, as written. */ readonly to: string };

/** The link `url` may be, or undefined when it must stay text. */
export function linkAddress(url: string): LinkAddress | undefined {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        return undefined;
    }
    switch (parsed.protocol) {
        case "http:":
        case "https:":
            if (parsed.hostname === "" || parsed.username !== "" || parsed.password !== "") {
                return undefined;
            }
            return { kind: "web", href: parsed.href, host: parsed.host };
        case "mailto:": {
            const to = decodeAddress(parsed.pathname);
            return to === "" ? undefined : { kind: "mail", href: parsed.href, to };
        }
        default:
            return undefined;
    }
}

/**
 * react-markdown's urlTransform: every URL attribute of the rendered Markdown goes through it.
 * A link's href becomes its normalized address, or is removed (the link then shows as text);
 * no other URL attribute survives (images are links by then, see rehypeUntrustedContent).
 */
export function markdownUrlTransform(url: string, key: string): string | undefined {
    return key === "href" ? linkAddress(url)?.href : undefined;
}

function decodeAddress(pathname: string): string {
    try {
        return decodeURIComponent(pathname);
    } catch {
        return pathname;
    }
}
