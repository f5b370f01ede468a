import type { DecodedSnapshot } from "./decodeSnapshot.js";
import { formatCount } from "../util/formatCount.js";
import { Swatch } from "../workspaces/Swatch.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { kvMemoryLabel } from "./kvMemoryLabel.js";
import { ownerLabel } from "./ownerLabel.js";
import type { PageMapTheme } from "./pageColour.js";

/**
 * The contexts beside the pool: each role's sequences (busy of total, tokens each, where its KV lives), every decode
 * sequence with the workspace resident in it, and the workspaces swapped out into pages.
 */
export function RoleOccupancy({
    snapshot,
    workspaces,
    theme
}: {
    readonly snapshot: DecodedSnapshot;
    readonly workspaces: readonly Workspace[];
    readonly theme: PageMapTheme;
}) {
    const decode = snapshot.roles.find((role) => role.role !== "prefill");
    const swapped = snapshot.workspaces.filter((usage) => usage.residency === "swapped");
    return (
        <section className="role-occupancy" aria-label="Context occupancy">
            <ul className="role-list">
                {snapshot.roles.map((role) => (
                    <li
                        key={role.role}
                        data-role={role.role}
                        data-busy={role.numBusySequences}
                        data-sequences={role.numSequences}
                        data-kv-memory={role.kvMemory.where}
                    >
                        <strong>{role.role}</strong>: {role.numBusySequences} of {role.numSequences}{" "}
                        {role.numSequences === 1 ? "sequence" : "sequences"} occupied, {formatCount(role.sequenceCapacity)} tokens each,{" "}
                        {kvMemoryLabel(role.kvMemory)}
                    </li>
                ))}
            </ul>
            {decode !== undefined && (
                <ol className="sequence-slots" aria-label={`${decode.role} sequences`}>
                    {Array.from({ length: decode.numSequences }, (_, index) => {
                        const usage = snapshot.workspaces.find((item) => item.residency === "resident" && item.sequence === index);
                        const label = usage === undefined ? undefined : ownerLabel(usage.workspace, workspaces);
                        return (
                            <li
                                key={index}
                                className="sequence-slot"
                                data-sequence={index}
                                data-workspace={usage?.workspace ?? ""}
                                data-workspace-name={label?.name ?? ""}
                                data-running={usage?.running === true ? "true" : "false"}
                            >
                                <Swatch colour={label?.colour ?? theme.free} />
                                <span className="sequence-slot-name">
                                    {index}:{" "}
                                    {label === undefined
                                        ? "empty"
                                        : `${label.name}, ${formatCount(usage!.heldTokens)} tokens${usage!.running ? ", running" : ""}`}
                                </span>
                            </li>
                        );
                    })}
                </ol>
            )}
            {swapped.length > 0 && (
                <p className="swapped-list">
                    Swapped out to pages:{" "}
                    {swapped
                        .map((usage) => `${ownerLabel(usage.workspace, workspaces).name} (${formatCount(usage.heldTokens)} tokens)`)
                        .join(", ")}
                </p>
            )}
            {snapshot.numQueued > 0 && (
                <p className="queued-count">
                    {snapshot.numQueued} {snapshot.numQueued === 1 ? "request" : "requests"} queued
                </p>
            )}
        </section>
    );
}
