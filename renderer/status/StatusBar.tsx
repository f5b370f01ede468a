import { useId, type ReactNode } from "react";
import type { KvRoleUse, ResourceUse } from "../../contract/resourceUse.js";
import { kvWhereLabel } from "../pageMap/kvMemoryLabel.js";
import { ownerLabel } from "../pageMap/ownerLabel.js";
import { useEngineStore } from "../stores/engineStore.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { formatBytes, formatBytesInFull, formatRate } from "./formatBytes.js";
import { useResourceStore } from "./resourceStore.js";
import "./StatusBar.css";

/** What each KV holder is called in the status bar. */
const roleNames: Readonly<Record<KvRoleUse["role"], string>> = {
    prefill: "Prefill context",
    decode: "Decode context",
    unified: "Context",
    pool: "Host page pool"
};

/** Workspaces named by their rate in the bar; the rest are counted ("+2"), and all are in the detail. */
const MAX_NAMED_RATES = 3;

/**
 * The status bar's live resource use, mirrored from the engine's resourceUse (useResourceMirror):
 * the engine process's RAM, its GPU's VRAM, KV bytes per role and tokens per second per
 * workspace. Compact figures in the bar; every number in full on hover or focus.
 */
export function StatusBar() {
    const use = useResourceStore((state) => state.use);
    const error = useResourceStore((state) => state.error);
    if (use === undefined) {
        return error === undefined ? null : (
            <span className="status-bar status-problem" role="status">
                Resource use not read: {error}
            </span>
        );
    }
    return (
        <div className="status-bar" role="group" aria-label="Engine resource use" data-at={use.at}>
            <BackendItem />
            <RamItem use={use} />
            {use.vram !== undefined && <VramItem vram={use.vram} />}
            <KvItem kv={use.kv} />
            <RatesItem use={use} />
            {error !== undefined && (
                <span className="status-problem" title={error}>
                    (late: {error})
                </span>
            )}
        </div>
    );
}

/** One figure of the bar: compact text, and its full numbers in a tooltip shown on hover and on focus. */
function StatusItem({
    children,
    detail,
    data
}: {
    readonly children: ReactNode;
    readonly detail: ReactNode;
    readonly data: Record<string, string | number>;
}) {
    const id = useId();
    return (
        <span className="status-item" tabIndex={0} aria-describedby={id} {...data}>
            {children}
            <span id={id} role="tooltip" className="status-detail">
                {detail}
            </span>
        </span>
    );
}

/** The backend the engine computes on, as EngineInfo's backend line gives it in full. */
function BackendItem() {
    const info = useEngineStore((state) => state.info);
    if (info === undefined) {
        return null;
    }
    const { compute } = info;
    const device = compute.devices[0]?.name.replace(/ \(.*$/, "");
    return (
        <StatusItem
            data={{ "data-status": "backend", "data-backend": compute.backend, "data-binary": compute.binary }}
            detail={info.backend}
        >
            {compute.backend}
            {device === undefined ? ` · ${compute.binary}` : ` · ${device}`}
        </StatusItem>
    );
}

function RamItem({ use }: { readonly use: ResourceUse }) {
    const { pid, rssBytes, heapUsedBytes } = use.process;
    return (
        <StatusItem
            data={{ "data-status": "ram", "data-pid": pid, "data-rss-bytes": rssBytes }}
            detail={`Engine process ${pid}: ${formatBytesInFull(rssBytes)} of RAM resident (RSS, the model's weights on the CPU included); JavaScript heap ${formatBytesInFull(heapUsedBytes)}.`}
        >
            RAM {formatBytes(rssBytes)}
        </StatusItem>
    );
}

function VramItem({ vram }: { readonly vram: NonNullable<ResourceUse["vram"]> }) {
    return (
        <StatusItem
            data={{ "data-status": "vram", "data-used-bytes": vram.usedBytes, "data-total-bytes": vram.totalBytes }}
            detail={`GPU memory in use: ${formatBytesInFull(vram.usedBytes)} of ${formatBytesInFull(vram.totalBytes)} (the whole GPU, other programs too).`}
        >
            VRAM {formatBytes(vram.usedBytes)} / {formatBytes(vram.totalBytes)}
        </StatusItem>
    );
}

function KvItem({ kv }: { readonly kv: readonly KvRoleUse[] }) {
    const used = kv.reduce((sum, role) => sum + role.usedBytes, 0);
    const reserved = kv.reduce((sum, role) => sum + role.reservedBytes, 0);
    return (
        <StatusItem
            data={{ "data-status": "kv", "data-used-bytes": used, "data-reserved-bytes": reserved }}
            detail={
                <>
                    KV in use of KV reserved:
                    {kv.map((role) => (
                        <span
                            key={role.role}
                            className="status-detail-line"
                            data-role={role.role}
                            data-used-bytes={role.usedBytes}
                            data-reserved-bytes={role.reservedBytes}
                            data-kv-memory={role.where}
                        >
                            {roleNames[role.role]}: {formatBytesInFull(role.usedBytes)} of {formatBytesInFull(role.reservedBytes)}, in{" "}
                            {kvWhereLabel(role.where)}
                        </span>
                    ))}
                </>
            }
        >
            KV {formatBytes(used)} / {formatBytes(reserved)}
            <span className="status-wide">
                {" ("}
                {kv.map((role) => `${role.role} ${formatBytes(role.usedBytes)}`).join(", ")})
            </span>
        </StatusItem>
    );
}

function RatesItem({ use }: { readonly use: ResourceUse }) {
    const workspaces = useWorkspaceStore((state) => state.workspaces);
    const rates = use.workspaces.filter((rate) => rate.tokensPerSecond > 0);
    const named = rates.slice(0, MAX_NAMED_RATES);
    return (
        <StatusItem
            data={{ "data-status": "rates", "data-tokens-per-second": use.tokensPerSecond }}
            detail={
                rates.length === 0 ? (
                    "No workspace generated in the last few seconds (tokens per second over the last complete seconds, counted by the engine)."
                ) : (
                    <>
                        Tokens per second over the last complete seconds, counted by the engine; {formatRate(use.tokensPerSecond)} in all:
                        {rates.map((rate) => (
                            <span key={rate.workspace} className="status-detail-line">
                                {ownerLabel(rate.workspace, workspaces).name}: {formatRate(rate.tokensPerSecond)}
                            </span>
                        ))}
                    </>
                )
            }
        >
            {rates.length === 0 ? (
                "0 tok/s"
            ) : (
                <>
                    <span className="status-compact">{formatRate(use.tokensPerSecond)}</span>
                    {named.map((rate) => {
                        const label = ownerLabel(rate.workspace, workspaces);
                        return (
                            <span
                                key={rate.workspace}
                                className="status-rate"
                                data-workspace={rate.workspace}
                                data-tokens-per-second={rate.tokensPerSecond}
                            >
                                <span className="status-swatch" style={{ background: label.colour ?? "currentColor" }} aria-hidden="true" />
                                <span className="status-rate-name">{label.name}</span> {formatRate(rate.tokensPerSecond)}
                            </span>
                        );
                    })}
                    {rates.length > named.length && <span className="status-rate">+{rates.length - named.length}</span>}
                </>
            )}
        </StatusItem>
    );
}
