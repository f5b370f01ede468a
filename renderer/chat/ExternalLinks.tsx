import { createContext, useContext, useMemo, useState, type ReactNode } from "react";
import type { LinkAddress } from "./linkAddress.js";
import { LinkConfirmDialog } from "./LinkConfirmDialog.js";

/**
 * Where the page runs, which decides who asks before a link leaves: in the desktop app, main
 * (main/window/externalLinks.ts) catches the new window a link opens and asks with a system
 * dialog before handing an http(s) address to the system browser; in a plain browser (headless
 * mode) this page asks, then opens a new tab.
 */
export type LinkHost = "desktop" | "browser";

export interface ExternalLinks {
    readonly host: LinkHost;
    /** Shows the address and asks before anything opens. */
    confirm(address: LinkAddress): void;
}

const ExternalLinksContext = createContext<ExternalLinks | undefined>(undefined);

/** The link confirmation for everything below it; App provides one for the page. */
export function ExternalLinksProvider({ host, children }: { readonly host: LinkHost; readonly children: ReactNode }) {
    const [asking, setAsking] = useState<LinkAddress>();
    const links = useMemo<ExternalLinks>(() => ({ host, confirm: setAsking }), [host]);
    return (
        <ExternalLinksContext.Provider value={links}>
            {children}
            {asking !== undefined && <LinkConfirmDialog address={asking} host={host} onClose={() => setAsking(undefined)} />}
        </ExternalLinksContext.Provider>
    );
}

/** The page's link confirmation; undefined outside an ExternalLinksProvider (a static render). */
export function useExternalLinks(): ExternalLinks | undefined {
    return useContext(ExternalLinksContext);
}

/** Which host this page has: the desktop app's preload exposes `window.kvault`; a plain browser has none. */
export function currentLinkHost(): LinkHost {
    return window.kvault === undefined ? "browser" : "desktop";
}
