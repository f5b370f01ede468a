import { useDraftStore } from "../stores/draftStore.js";
import { useEngineStore } from "../stores/engineStore.js";
import { useTurnStore } from "../stores/turnStore.js";
import { meterReading } from "../meter/meterReading.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { composerState, type ComposerState } from "./composerState.js";
import { conversationKey } from "./conversationMessages.js";

/** composerState for a workspace, from the stores. */
export function useComposerState(workspace: Workspace): ComposerState {
    const draft = useDraftStore((state) => state.drafts[workspace.id] ?? "");
    const measured = useDraftStore((state) => state.measured[workspace.id]);
    const connection = useEngineStore((state) => state.connection);
    const running = useTurnStore((state) => state.live[workspace.id] !== undefined);
    const fresh = measured !== undefined && measured.draft === draft && measured.conversationKey === conversationKey(workspace);
    const reading = measured === undefined ? undefined : meterReading(measured.result, workspace.settings.maxTokens);
    return composerState({ draft, connection, running, reading, fresh });
}
