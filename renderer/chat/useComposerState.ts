import { useDraftStore } from "../stores/draftStore";
import { useEngineStore } from "../stores/engineStore";
import { useTurnStore } from "../stores/turnStore";
import { meterReading } from "../meter/meterReading";
import type { Workspace } from "../workspaces/Workspace";
import { composerState, type ComposerState } from "./composerState";
import { conversationKey } from "./conversationMessages";

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
