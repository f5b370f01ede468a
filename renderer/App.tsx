import { useAppServices } from "./AppServices.js";
import { ChatView } from "./chat/ChatView.js";
import { currentLinkHost, ExternalLinksProvider } from "./chat/ExternalLinks.js";
import { ConnectionBadge } from "./ConnectionBadge.js";
import { EngineProblemBanner } from "./EngineProblemBanner.js";
import { IsolationPanel } from "./isolation/IsolationPanel.js";
import { ModelPanel } from "./model/ModelPanel.js";
import { PageMap } from "./pageMap/PageMap.js";
import { useEngineMirror } from "./stores/useEngineMirror.js";
import { useUiStore } from "./stores/uiStore.js";
import { useWorkspaceStore } from "./stores/workspaceStore.js";
import { useAppInfo } from "./useAppInfo.js";
import { WorkspaceList } from "./workspaces/WorkspaceList.js";

/** Who confirms a link out of a chat: main in the desktop app, the page in a browser. */
const linkHost = currentLinkHost();

/** The app shell: workspaces, the selected workspace's chat, and the engine's panels. */
export function App() {
    const appInfo = useAppInfo();
    useEngineMirror(useAppServices().rpc);
    const selected = useWorkspaceStore((state) => state.workspaces.find((workspace) => workspace.id === state.selectedId));
    const workspacesLoading = useWorkspaceStore((state) => state.load.kind === "loading");
    const pageMapOpen = useUiStore((state) => state.pageMapOpen);
    const isolationOpen = useUiStore((state) => state.isolationOpen);

    return (
        <ExternalLinksProvider host={linkHost}>
            <div className="shell">
                <header className="shell-header">
                    <h1>Kvault</h1>
                    <ConnectionBadge />
                </header>
                <EngineProblemBanner />
                <aside className="shell-sidebar">
                    <WorkspaceList />
                </aside>
                <main className="shell-main">
                    {selected === undefined ? (
                        <p className="placeholder">{workspacesLoading ? "Loading workspaces…" : "Make a workspace to start a chat."}</p>
                    ) : (
                        <ChatView key={selected.id} workspace={selected} />
                    )}
                </main>
                <aside className="shell-panels" aria-label="Engine">
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
                    <details className="panel">
                        <summary>Model</summary>
                        <ModelPanel />
                    </details>
                </aside>
                <footer className="shell-footer">
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
