import { useDraftStore } from "../stores/draftStore.js";
import { useEngineStore } from "../stores/engineStore.js";
import { conversationKey } from "../chat/conversationMessages.js";
import { kvMemoryLabel } from "../pageMap/kvMemoryLabel.js";
import { formatCount } from "../util/formatCount.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { meterReading } from "./meterReading.js";
import { remoteSourceLines, useRemoteMeterStore } from "./remoteMeter.js";
import "./ContextMeter.css";

/**
 * The workspace's context: tokens the conversation uses, the draft's size, what is left, the
 * window, and the measured capacity of each role and where its KV lives. Numbers are the engine's (measure, snapshot);
 * on a remote backend, the server's, with the source of each (or why it gives none).
 */
export function ContextMeter({ workspace }: { readonly workspace: Workspace }) {
    const measured = useDraftStore((state) => state.measured[workspace.id]);
    const measureError = useDraftStore((state) => state.measureErrors[workspace.id]);
    const draft = useDraftStore((state) => state.drafts[workspace.id] ?? "");
    const roles = useEngineStore((state) => state.snapshot?.roles);
    const info = useEngineStore((state) => state.info);
    const fresh = measured !== undefined && measured.draft === draft && measured.conversationKey === conversationKey(workspace);
    const reading = measured === undefined ? undefined : meterReading(measured.result, workspace.settings.maxTokens);
    const remote = useRemoteMeterStore((state) => (workspace.backend === undefined ? undefined : state.measured[workspace.id]));

    return (
        <section
            className="context-meter"
            aria-label="Context meter"
            data-fresh={fresh ? "true" : "false"}
            data-used={reading?.usedTokens}
            data-draft={reading?.draftTokens}
            data-left={reading?.leftTokens}
            data-limit={reading?.limit}
        >
            {reading === undefined ? (
                <p className="placeholder">{measureError ?? "Measuring…"}</p>
            ) : (
                <>
                    <meter
                        className="context-meter-bar"
                        min={0}
                        max={reading.limit}
                        value={Math.min(reading.limit, reading.usedTokens + reading.draftTokens)}
                        low={reading.limit * 0.75}
                        high={reading.limit * 0.95}
                        optimum={0}
                        aria-label={`Context used: ${formatCount(reading.usedTokens + reading.draftTokens)} of ${formatCount(reading.limit)} tokens`}
                    />
                    <p className={fresh ? "context-meter-numbers" : "context-meter-numbers stale"}>
                        <span>
                            Used <strong data-meter="used">{formatCount(reading.usedTokens)}</strong>
                        </span>
                        <span>
                            This message <strong data-meter="draft">{formatCount(reading.draftTokens)}</strong>
                        </span>
                        <span>
                            Left <strong data-meter="left">{formatCount(Math.max(0, reading.leftTokens))}</strong> of{" "}
                            <strong data-meter="limit">{formatCount(reading.limit)}</strong>
                        </span>
                        {reading.remainingTokens > 0 ? (
                            <span>
                                After it, <strong data-meter="remaining">{formatCount(reading.remainingTokens)}</strong> for the answer (Max
                                tokens {formatCount(workspace.settings.maxTokens)})
                            </span>
                        ) : (
                            <span className="context-meter-over">
                                Over by <strong data-meter="over">{formatCount(-reading.remainingTokens)}</strong>
                            </span>
                        )}
                    </p>
                </>
            )}
            {workspace.backend !== undefined ? (
                <ul className="context-meter-capacities" aria-label="Where the remote figures come from">
                    {remote === undefined ? (
                        <li>Asking backend {workspace.backend.name}…</li>
                    ) : (
                        remoteSourceLines(remote).map((line) => (
                            <li key={line.key} data-remote-source={line.key}>
                                {line.text}
                            </li>
                        ))
                    )}
                </ul>
            ) : (
                <p className="context-meter-capacities">
                    {info !== undefined && (
                        <>
                            Window {formatCount(info.window.limit)} (set by the {info.window.boundBy}) ·{" "}
                        </>
                    )}
                    {(roles ?? [])
                        .map((role) => `${role.role} ${formatCount(role.sequenceCapacity)} per sequence (${kvMemoryLabel(role.kvMemory)})`)
                        .join(" · ")}
                    {info !== undefined && <> · pool {formatCount(info.capacities.pool)}</>}
                </p>
            )}
        </section>
    );
}
