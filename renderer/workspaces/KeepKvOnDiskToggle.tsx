import { useWorkspaceStore } from "../stores/workspaceStore.js";
import type { Workspace } from "./Workspace.js";

/**
 * The workspace's opt-in to keep its KV on disk, encrypted, so that its first turn after a restart
 * loads the KV instead of reading the whole chat again. Off by default; a workspace on a remote
 * backend keeps no KV here.
 */
export function KeepKvOnDiskToggle({ workspace }: { readonly workspace: Workspace }) {
    if (workspace.backend !== undefined) {
        return null;
    }
    const checked = workspace.settings.keepKvOnDisk === true;
    return (
        <label className="field checkbox-field">
            <input
                type="checkbox"
                aria-label="Keep this workspace's KV on disk"
                checked={checked}
                onChange={(event) => useWorkspaceStore.getState().updateSettings(workspace.id, { keepKvOnDisk: event.target.checked })}
            />
            <span>Resume without reading the chat again</span>
            <span className="field-hint">
                Keeps this workspace&apos;s KV on disk, encrypted (AES-256-GCM, key in the OS keychain), for the next start. A change of
                model or KV settings, or a damaged file, recomputes it. Off: its KV never touches a disk.
            </span>
        </label>
    );
}
