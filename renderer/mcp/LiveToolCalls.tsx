import { useLiveToolCalls } from "./liveToolCalls.js";
import { ToolCallCard } from "./ToolCallCard.js";
import { ToolPermissionPrompt } from "./ToolPermissionPrompt.js";

/** The running turn's tool calls: a prompt for each waiting for the user, a card for each done. */
export function LiveToolCalls({ workspace }: { readonly workspace: string }) {
    const live = useLiveToolCalls((state) => state.byWorkspace[workspace]);
    if (live === undefined || live.calls.length === 0) {
        return null;
    }
    return (
        <li className="message message-assistant tool-calls-live">
            {live.calls.map(({ call, outcome }) =>
                outcome === undefined ? (
                    <ToolPermissionPrompt key={call.callId} requestId={live.requestId} call={call} />
                ) : (
                    <ToolCallCard key={call.callId} outcome={outcome} />
                )
            )}
        </li>
    );
}
