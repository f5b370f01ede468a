import { useEffect } from "react";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { APP_VIEWS } from "./appViews.js";
import { useViewStore } from "./viewStore.js";

/** Typing in a field keeps its own keys: "/" and "?" are text there. */
function isTyping(target: EventTarget | null): boolean {
    return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

/** Shows the Chats view and focuses the selected chat's message box once it is on screen. */
function focusMessageBox(): void {
    useViewStore.getState().showView("chats");
    requestAnimationFrame(() => document.querySelector<HTMLTextAreaElement>('#view-chats textarea[aria-label="Message"]')?.focus());
}

/** Moves the selection `step` workspaces along the list, wrapping. */
function selectNeighbour(step: number): void {
    const { workspaces, selectedId, select } = useWorkspaceStore.getState();
    if (workspaces.length === 0) {
        return;
    }
    const index = workspaces.findIndex((workspace) => workspace.id === selectedId);
    select(workspaces[(index + step + workspaces.length) % workspaces.length]!.id);
    useViewStore.getState().showView("chats");
}

/** The page's own keys (listed by appShortcuts.ts): views, new chat, switching chats, the message box, the shortcuts dialog. */
export function useAppShortcuts(): void {
    useEffect(() => {
        const onKeyDown = (event: KeyboardEvent): void => {
            if (event.defaultPrevented || event.ctrlKey || event.metaKey) {
                return;
            }
            const view = event.altKey ? APP_VIEWS.find((entry) => event.code === `Digit${entry.digit}`) : undefined;
            if (view !== undefined) {
                event.preventDefault();
                useViewStore.getState().showView(view.id);
            } else if (event.altKey && event.code === "KeyN") {
                event.preventDefault();
                useWorkspaceStore.getState().create();
                focusMessageBox();
            } else if (event.altKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
                event.preventDefault();
                selectNeighbour(event.key === "ArrowUp" ? -1 : 1);
            } else if (!event.altKey && !isTyping(event.target) && event.key === "/") {
                event.preventDefault();
                focusMessageBox();
            } else if (!event.altKey && !isTyping(event.target) && event.key === "?") {
                event.preventDefault();
                useViewStore.getState().setShortcutsOpen(true);
            }
        };
        document.addEventListener("keydown", onKeyDown);
        return () => document.removeEventListener("keydown", onKeyDown);
    }, []);
}
