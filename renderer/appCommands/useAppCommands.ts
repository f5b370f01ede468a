import { useEffect } from "react";
import { useAppServices } from "../AppServices.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { applyAppCommand, type AppCommandOutcome } from "./applyAppCommand.js";
import { usePanelRequestStore } from "./panelRequestStore.js";

/**
 * Acts on the desktop app's menu commands (window.kvault.onAppCommand); in a plain browser there
 * is no menu and this does nothing. Mount once, in App.
 */
export function useAppCommands(): void {
    const { model } = useAppServices();
    useEffect(() => {
        const bridge = window.kvault;
        if (bridge === undefined) {
            return;
        }
        return bridge.onAppCommand((command) => {
            applyAppCommand(command, { workspaces: useWorkspaceStore, model, panels: usePanelRequestStore, focusFind: focusComposer });
        });
    }, [model]);
}

/** The renderer has no find box yet: Find puts the keyboard in the selected workspace's message box (chat/Composer.tsx). */
function focusComposer(): AppCommandOutcome {
    const composer = document.querySelector<HTMLTextAreaElement>("textarea.composer-input");
    if (composer === null) {
        return "none";
    }
    composer.focus();
    return "composerFocused";
}
