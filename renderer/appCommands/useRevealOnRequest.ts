import { useCallback, useEffect, useRef } from "react";
import { usePanelRequestStore, type RevealablePanel } from "./panelRequestStore.js";

/**
 * Opens the <details> around a panel and scrolls it into view each time a menu command asks for
 * it (panelRequestStore). Returns the ref to put on the panel's outermost element; any element
 * inside the <details> will do, so a panel with several states puts it on each.
 */
export function useRevealOnRequest(panel: RevealablePanel): (element: HTMLElement | null) => void {
    const element = useRef<HTMLElement | null>(null);
    const request = usePanelRequestStore((state) => state.requests[panel]);
    const handled = useRef(request);
    useEffect(() => {
        if (request === handled.current) {
            return;
        }
        handled.current = request;
        const details = element.current?.closest("details");
        if (details !== null && details !== undefined) {
            details.open = true;
        }
        element.current?.scrollIntoView({ block: "nearest" });
    }, [request]);
    return useCallback((current: HTMLElement | null) => {
        element.current = current;
    }, []);
}
