import type { ComponentProps, MouseEvent } from "react";
import type { ExtraProps } from "react-markdown";
import { useExternalLinks } from "./ExternalLinks.js";
import { linkAddress } from "./linkAddress.js";

/** Longest refused address shown in the text; the whole one is in the title. */
const SHOWN_ADDRESS_CHARS = 80;

/**
 * A link in a chat. An address that may be a link (linkAddress) opens only once the user has
 * confirmed it: in the desktop app main asks (the click opens a new window, which main stops and
 * turns into its question); elsewhere ExternalLinks' dialog asks. Any other address is shown as
 * text, with the address it names, never followed. Footnote links (in-page) are plain text.
 */
export function MarkdownLink(props: ComponentProps<"a"> & ExtraProps) {
    const { href, children } = props;
    const links = useExternalLinks();
    const address = href === undefined ? undefined : linkAddress(href);
    if (address === undefined) {
        const data = props as Readonly<Record<string, unknown>>;
        if (data["data-footnote-backref"] !== undefined) {
            return null;
        }
        const refused = data["data-refused-href"];
        if (typeof refused !== "string") {
            return <span className="md-footnote-ref">{children}</span>;
        }
        const shown = refused.length > SHOWN_ADDRESS_CHARS ? `${refused.slice(0, SHOWN_ADDRESS_CHARS)}…` : refused;
        return (
            <span className="md-link-refused" data-refused-href={refused}>
                {children}{" "}
                <span
                    className="md-link-refused-note"
                    title={`Not followed: ${refused}. Only http, https and mailto addresses are links here.`}
                >
                    ({shown === "" ? "no address" : `not a web address: ${shown}`})
                </span>
            </span>
        );
    }
    const ask = (event: MouseEvent<HTMLAnchorElement>): void => {
        if (links?.host === "desktop" && address.kind === "web") {
            return; // target=_blank: main stops the new window and asks.
        }
        event.preventDefault();
        if (links === undefined) {
            throw new Error("A chat link was clicked outside an ExternalLinksProvider; App provides one around the chat.");
        }
        links.confirm(address);
    };
    return (
        <a
            href={address.href}
            className={props.className}
            title={address.kind === "web" ? address.href : address.to}
            target="_blank"
            rel="noopener noreferrer"
            onClick={ask}
            onAuxClick={(event) => {
                if (event.button === 1) {
                    ask(event);
                }
            }}
        >
            {children}
        </a>
    );
}
