import { useAppInfo } from "./useAppInfo";

/** The app shell: header, the workspace list, the main area and a footer with the host's version. */
export function App() {
    const appInfo = useAppInfo();

    return (
        <div className="shell">
            <header className="shell-header">
                <h1>Kvault</h1>
            </header>
            <nav className="shell-sidebar" aria-labelledby="workspaces-heading">
                <h2 id="workspaces-heading">Workspaces</h2>
                <p className="placeholder">No workspaces yet</p>
            </nav>
            <main className="shell-main">
                <p className="placeholder">Load a model to start</p>
            </main>
            <footer className="shell-footer">
                {appInfo !== undefined && <span>Kvault {appInfo.version} · {appInfo.platform}</span>}
            </footer>
        </div>
    );
}
