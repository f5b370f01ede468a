import { useDeferredValue, useMemo, useState } from "react";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { searchWorkspaces, type SearchHit } from "./searchWorkspaces.js";

/**
 * Search across every workspace: its name and every message, earlier versions included. A hit
 * opens its workspace and, for a message on the branch shown, scrolls it into view.
 */
export function WorkspaceSearch() {
    const workspaces = useWorkspaceStore((state) => state.workspaces);
    const [query, setQuery] = useState("");
    const deferred = useDeferredValue(query);
    const hits = useMemo(() => searchWorkspaces(workspaces, deferred), [workspaces, deferred]);
    return (
        <div className="workspace-search" role="search">
            <input
                type="search"
                aria-label="Search workspaces and messages"
                placeholder="Search chats…"
                value={query}
                onChange={(event) => setQuery(event.target.value)}
                onKeyDown={(event) => {
                    if (event.key === "Escape") {
                        setQuery("");
                    }
                }}
            />
            {deferred.trim() !== "" && (
                <ul className="search-hits" aria-label="Search results">
                    {hits.length === 0 && <li className="placeholder">Nothing has “{deferred.trim()}”.</li>}
                    {hits.map((hit) => (
                        <li key={`${hit.workspaceId}:${hit.messageId ?? "name"}`}>
                            <button type="button" className="search-hit" onClick={() => openHit(hit)}>
                                <span className="search-hit-where">
                                    {hit.workspaceName}
                                    {hit.messageId === undefined ? " (name)" : hit.role === "user" ? " · you" : " · model"}
                                    {hit.otherBranch === true ? " · other version" : ""}
                                </span>
                                <span className="search-hit-text">
                                    {hit.snippet.slice(0, hit.matchStart)}
                                    <mark>{hit.snippet.slice(hit.matchStart, hit.matchStart + hit.matchLength)}</mark>
                                    {hit.snippet.slice(hit.matchStart + hit.matchLength)}
                                </span>
                            </button>
                        </li>
                    ))}
                </ul>
            )}
        </div>
    );
}

function openHit(hit: SearchHit): void {
    const store = useWorkspaceStore.getState();
    store.select(hit.workspaceId);
    if (hit.messageId !== undefined && hit.otherBranch === true) {
        store.selectBranch(hit.workspaceId, hit.messageId);
    }
    // After React has drawn the chat: bring the message into view.
    requestAnimationFrame(() => {
        if (hit.messageId !== undefined) {
            document.querySelector(`[data-message-id="${CSS.escape(hit.messageId)}"]`)?.scrollIntoView({ block: "center" });
        }
    });
}
