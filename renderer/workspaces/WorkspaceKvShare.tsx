import { useEngineStore } from "../stores/engineStore.js";
import { formatCount } from "../util/formatCount.js";
import type { Workspace } from "./Workspace.js";

/**
 * Beside the settings: the model's context window (what Max tokens and the chat must fit in) and
 * how much of the engine's decode KV this workspace holds now. The engine's numbers (info,
 * snapshot), never the renderer's own.
 */
export function WorkspaceKvShare({ workspace }: { readonly workspace: Workspace }) {
    const info = useEngineStore((state) => state.info);
    const usage = useEngineStore((state) => state.snapshot?.workspaces.find((item) => item.workspace === workspace.id));
    const decode = useEngineStore((state) => state.snapshot?.roles.find((role) => role.role === "decode" || role.role === "unified"));
    if (info === undefined) {
        return <p className="field-hint">The model's window is shown once the engine is ready.</p>;
    }
    const totalDecode = decode === undefined ? undefined : decode.sequenceCapacity * decode.numSequences;
    const held = usage?.heldTokens ?? 0;
    return (
        <p className="field-hint kv-share" aria-label="Window and KV share">
            {info.modelName}: window {formatCount(info.window.limit)} tokens (set by the {info.window.boundBy}). This workspace holds{" "}
            {formatCount(held)} tokens of KV
            {usage === undefined
                ? ""
                : usage.residency === "resident"
                  ? ` in decode sequence ${usage.sequence ?? "?"}`
                  : ` (${usage.residency})`}
            {totalDecode === undefined || totalDecode === 0
                ? "."
                : `, ${((100 * held) / totalDecode).toFixed(1)}% of the ${formatCount(totalDecode)} tokens of decode KV (${decode!.numSequences} sequences).`}
        </p>
    );
}
