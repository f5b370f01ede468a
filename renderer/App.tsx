import { useEffect, useRef } from "react";
import { Keyboard, PanelLeft } from "lucide-react";
import { usePanelRequestStore } from "./appCommands/panelRequestStore.js";
import { useAppCommands } from "./appCommands/useAppCommands.js";
import { useAppServices } from "./AppServices.js";
import { ChatView } from "./chat/ChatView.js";
import { currentLinkHost, ExternalLinksProvider } from "./chat/ExternalLinks.js";
import { ConnectionBadge } from "./ConnectionBadge.js";
import { EngineProblemBanner } from "./EngineProblemBanner.js";
import { LogoutButton } from "./LogoutButton.js";
import { IsolationPanel } from "./isolation/IsolationPanel.js";
import { RequestLogPanel } from "./requestLog/RequestLogPanel.js";
import { ModelPanel } from "./model/ModelPanel.js";
import { SettingsPanel } from "./settings/SettingsPanel.js";
import { AppView } from "./shell/AppViewPanel.js";
import { MemoryView } from "./shell/MemoryView.js";
import { ShortcutsDialog } from "./shell/ShortcutsDialog.js";
import { useAppShortcuts } from "./shell/useAppShortcuts.js";
import { useTheme } from "./shell/themeStore.js";
import { ViewRail } from "./shell/ViewRail.js";
import { useViewStore } from "./shell/viewStore.js";
import { StatusBar } from "./status/StatusBar.js";
import { useResourceMirror } from "./status/useResourceMirror.js";
import { useEngineMirror } from "./stores/useEngineMirror.js";
import { useWorkspaceStore } from "./stores/workspaceStore.js";
import { useAppInfo } from "./useAppInfo.js";
import { useShellDrawer } from "./useShellDrawer.js";
import { WorkspaceList } from "./workspaces/WorkspaceList.js";

/** Who confirms a link out of a chat: main in the desktop app, the page in a browser. */
const linkHost = currentLinkHost();

/**
 * The app shell: a rail of views (Chats, Models, Memory, Isolation, Server, Settings), the shown
 * view, and the status bar. Every view stays mounted, hidden when not shown, so that a running
 * download or a draft survives a switch. In Chats, the workspace list is a drawer on a narrow
 * window, opened from the header (useShellDrawer, App.css).
 */
export function App() {
    const appInfo = useAppInfo();
    const { rpc } = useAppServices();
    useEngineMirror(rpc);
    useResourceMirror(rpc);
    useAppCommands();
    useAppShortcuts();
    useTheme();
    const view = useViewStore((state) => state.view);
    const selected = useWorkspaceStore((state) => state.workspaces.find((workspace) => workspace.id === state.selectedId));
    const workspacesLoading = useWorkspaceStore((state) => state.load.kind === "loading");
    const drawers = useShellDrawer();
    const { dismiss } = drawers;

    // Choosing a workspace in the drawer shows its chat (whose message box takes the focus).
    const selectedId = selected?.id;
    useEffect(() => dismiss(), [selectedId, dismiss]);
    useShowViewOnMenuRequest();

    return (
        <ExternalLinksProvider host={linkHost}>
            <div className="shell" data-drawer={drawers.open} data-view={view}>
                <header className="shell-header">
                    <div className="shell-header-start">
                        <button
                            ref={drawers.toggles.workspaces}
                            type="button"
                            className="drawer-toggle drawer-toggle-workspaces"
                            aria-expanded={drawers.open === "workspaces"}
                            aria-controls="drawer-workspaces"
                            aria-label={drawers.open === "workspaces" ? "Hide the workspace list" : "Show the workspace list"}
                            onClick={() => drawers.toggle("workspaces")}
                        >
                            <PanelLeft aria-hidden="true" size={16} /> Workspaces
                        </button>
                        <h1>Kvault</h1>
                    </div>
                    <div className="shell-header-end">
                        <ConnectionBadge />
                        <LogoutButton />
                        <button
                            type="button"
                            className="icon-button"
                            aria-label="Keyboard shortcuts"
                            aria-keyshortcuts="?"
                            title="Keyboard shortcuts (?)"
                            onClick={() => useViewStore.getState().setShortcutsOpen(true)}
                        >
                            <Keyboard aria-hidden="true" size={16} />
                        </button>
                    </div>
                </header>
                <EngineProblemBanner />
                <ViewRail />
                <main className="shell-main">
                    <AppView id="chats" className="chats-view">
                        <aside
                            id="drawer-workspaces"
                            className="shell-sidebar"
                            aria-label="Workspace list"
                            onKeyDown={drawers.onDrawerKeyDown}
                        >
                            <button
                                ref={drawers.closers.workspaces}
                                type="button"
                                className="drawer-close"
                                aria-label="Close the workspace list"
                                onClick={() => drawers.close(true)}
                            >
                                Close
                            </button>
                            <WorkspaceList />
                        </aside>
                        <div className="chats-view-chat">
                            {selected === undefined ? (
                                <p className="placeholder">
                                    {workspacesLoading ? "Loading workspaces…" : "Make a workspace to start a chat."}
                                </p>
                            ) : (
                                <ChatView key={selected.id} workspace={selected} />
                            )}
                        </div>
                    </AppView>
                    <AppView id="models" className="scroll-view">
                        <h2 className="view-title">Models</h2>
                        <ModelPanel />
                    </AppView>
                    <AppView id="memory" className="scroll-view">
                        <MemoryView />
                    </AppView>
                    <AppView id="isolation" className="scroll-view">
                        <h2 className="view-title">Isolation</h2>
                        <IsolationPanel />
                    </AppView>
                    <AppView id="server" className="scroll-view">
                        <h2 className="view-title">Server</h2>
                        <SettingsPanel part="server" />
                        <section className="settings-section" aria-labelledby="request-log-heading">
                            <h3 id="request-log-heading">API requests</h3>
                            <RequestLogPanel open={view === "server"} />
                        </section>
                    </AppView>
                    <AppView id="settings" className="scroll-view">
                        <h2 className="view-title">Settings</h2>
                        <SettingsPanel part="settings" />
                    </AppView>
                </main>
                {drawers.open !== undefined && <div className="drawer-backdrop" aria-hidden="true" onClick={() => drawers.close(true)} />}
                <footer className="shell-footer">
                    <StatusBar />
                    {appInfo !== undefined && (
                        <span>
                            Kvault {appInfo.version} · {appInfo.platform}
                        </span>
                    )}
                </footer>
                <ShortcutsDialog />
            </div>
        </ExternalLinksProvider>
    );
}

/** The menu's Open Model… and Settings… show their view (the panel inside then reveals itself, useRevealOnRequest). */
function useShowViewOnMenuRequest(): void {
    const requests = usePanelRequestStore((state) => state.requests);
    const seen = useRef(requests);
    useEffect(() => {
        if (requests.model !== seen.current.model) {
            useViewStore.getState().showView("models");
        } else if (requests.settings !== seen.current.settings) {
            useViewStore.getState().showView("settings");
        }
        seen.current = requests;
    }, [requests]);
}
