import { useEffect, useState } from "react";
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
import { PageMap } from "./pageMap/PageMap.js";
import { SettingsPanel } from "./settings/SettingsPanel.js";
import { StatusBar } from "./status/StatusBar.js";
import { useResourceMirror } from "./status/useResourceMirror.js";
import { useEngineMirror } from "./stores/useEngineMirror.js";
import { useUiStore } from "./stores/uiStore.js";
import { useWorkspaceStore } from "./stores/workspaceStore.js";
import { useAppInfo } from "./useAppInfo.js";
import { useShellDrawer, type ShellDrawer, type ShellDrawers } from "./useShellDrawer.js";
import { WorkspaceList } from "./workspaces/WorkspaceList.js";

/** Who confirms a link out of a chat: main in the desktop app, the page in a browser. */
const linkHost = currentLinkHost();

/**
 * The app shell: workspaces, the selected workspace's chat, and the engine's panels. On a narrow
 * window the side panels are drawers, opened from the header (useShellDrawer, App.css).
 */
export function App() {
    const appInfo = useAppInfo();
    const { rpc } = useAppServices();
    useEngineMirror(rpc);
    useResourceMirror(rpc);
    useAppCommands();
    const selected = useWorkspaceStore((state) => state.workspaces.find((workspace) => workspace.id === state.selectedId));
    const workspacesLoading = useWorkspaceStore((state) => state.load.kind === "loading");
    const pageMapOpen = useUiStore((state) => state.pageMapOpen);
    const isolationOpen = useUiStore((state) => state.isolationOpen);
    const [requestLogOpen, setRequestLogOpen] = useState(false);
    const drawers = useShellDrawer();
    const { dismiss } = drawers;

    // Choosing a workspace in the drawer shows its chat (whose message box takes the focus).
    const selectedId = selected?.id;
    useEffect(() => dismiss(), [selectedId, dismiss]);

    return (
        <ExternalLinksProvider host={linkHost}>
            <div className="shell" data-drawer={drawers.open}>
                <header className="shell-header">
                    <div className="shell-header-start">
                        <DrawerToggle drawers={drawers} drawer="workspaces" label="workspace list" text="Workspaces" />
                        <h1>Kvault</h1>
                    </div>
                    <div className="shell-header-end">
                        <ConnectionBadge />
                        <LogoutButton />
                        <DrawerToggle drawers={drawers} drawer="engine" label="engine panels" text="Engine" />
                    </div>
                </header>
                <EngineProblemBanner />
                <aside id="drawer-workspaces" className="shell-sidebar" aria-label="Workspace list" onKeyDown={drawers.onDrawerKeyDown}>
                    <DrawerClose drawers={drawers} drawer="workspaces" label="workspace list" />
                    <WorkspaceList />
                </aside>
                <main className="shell-main">
                    {selected === undefined ? (
                        <p className="placeholder">{workspacesLoading ? "Loading workspaces…" : "Make a workspace to start a chat."}</p>
                    ) : (
                        <ChatView key={selected.id} workspace={selected} />
                    )}
                </main>
                <aside id="drawer-engine" className="shell-panels" aria-label="Engine" onKeyDown={drawers.onDrawerKeyDown}>
                    <DrawerClose drawers={drawers} drawer="engine" label="engine panels" />
                    <details
                        className="panel"
                        open={pageMapOpen}
                        onToggle={(event) => useUiStore.getState().setPageMapOpen(event.currentTarget.open)}
                    >
                        <summary>Page map</summary>
                        <PageMap />
                    </details>
                    <details
                        className="panel"
                        open={isolationOpen}
                        onToggle={(event) => useUiStore.getState().setIsolationOpen(event.currentTarget.open)}
                    >
                        <summary>Isolation</summary>
                        <IsolationPanel />
                    </details>
                    <details className="panel" onToggle={(event) => setRequestLogOpen(event.currentTarget.open)}>
                        <summary>API requests</summary>
                        <RequestLogPanel open={requestLogOpen} />
                    </details>
                    <details className="panel">
                        <summary>Model</summary>
                        <ModelPanel />
                    </details>
                    <details className="panel">
                        <summary>Settings</summary>
                        <SettingsPanel />
                    </details>
                </aside>
                {drawers.open !== undefined && <div className="drawer-backdrop" aria-hidden="true" onClick={() => drawers.close(true)} />}
                <footer className="shell-footer">
                    <StatusBar />
                    {appInfo !== undefined && (
                        <span>
                            Kvault {appInfo.version} · {appInfo.platform}
                        </span>
                    )}
                </footer>
            </div>
        </ExternalLinksProvider>
    );
}

/** The header button that opens or closes a drawer; shown only where the panel is one (App.css). */
function DrawerToggle({
    drawers,
    drawer,
    label,
    text
}: {
    readonly drawers: ShellDrawers;
    readonly drawer: ShellDrawer;
    readonly label: string;
    readonly text: string;
}) {
    const open = drawers.open === drawer;
    return (
        <button
            ref={drawers.toggles[drawer]}
            type="button"
            className={`drawer-toggle drawer-toggle-${drawer}`}
            aria-expanded={open}
            aria-controls={`drawer-${drawer}`}
            aria-label={open ? `Hide the ${label}` : `Show the ${label}`}
            onClick={() => drawers.toggle(drawer)}
        >
            {text}
        </button>
    );
}

function DrawerClose({ drawers, drawer, label }: { readonly drawers: ShellDrawers; readonly drawer: ShellDrawer; readonly label: string }) {
    return (
        <button
            ref={drawers.closers[drawer]}
            type="button"
            className="drawer-close"
            aria-label={`Close the ${label}`}
            onClick={() => drawers.close(true)}
        >
            Close
        </button>
    );
}
