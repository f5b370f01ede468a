import { create } from "zustand";
import type { RemoteMeasurement } from "../../contract/backends.js";
import type { DraftMeasurement } from "../../contract/engineProtocol.js";
import { formatCount } from "../util/formatCount.js";

/** The latest measureRemote answer per workspace on a backend: the meter's source lines. */
export const useRemoteMeterStore = create<{
    readonly measured: Readonly<Record<string, RemoteMeasurement>>;
    set(measurement: RemoteMeasurement): void;
}>()((set) => ({
    measured: {},
    set: (measurement) => set((state) => ({ measured: { ...state.measured, [measurement.workspace]: measurement } }))
}));

/**
 * The remote's figures as the meter's DraftMeasurement, when the server gave both its token counts
 * and its window; undefined otherwise (the meter then says what is missing and why, and Send is
 * left to the server's own answer).
 */
export function remoteDraftMeasurement(remote: RemoteMeasurement): DraftMeasurement | undefined {
    if (remote.tokens.kind !== "known" || remote.window.kind !== "known") {
        return undefined;
    }
    const { usedTokens, draftTokens } = remote.tokens;
    const remainingTokens = remote.window.tokens - usedTokens - draftTokens;
    return {
        workspace: remote.workspace,
        usedTokens,
        draftTokens,
        limit: remote.window.tokens,
        remainingTokens,
        fits: remainingTokens >= 0
    };
}

/** Why the meter cannot show a remote workspace's context: the figures the server did not give, and why. */
export function remoteMissing(remote: RemoteMeasurement): string {
    const missing = [
        remote.tokens.kind === "unknown" ? `Token counts: ${remote.tokens.reason}` : undefined,
        remote.window.kind === "unknown" ? `Window: ${remote.window.reason}` : undefined
    ].filter((line) => line !== undefined);
    return `The context of this workspace on ${remote.backend} (${remote.model}) is not shown: ${missing.join(" ")}`;
}

/** Each figure's source line under the meter: where it came from, or that the server does not say. */
export function remoteSourceLines(remote: RemoteMeasurement): { readonly key: string; readonly text: string }[] {
    const on = `backend ${remote.backend} (${remote.model})`;
    return [
        {
            key: "tokens",
            text: remote.tokens.kind === "known" ? `Tokens counted by ${on}: ${remote.tokens.source}` : `Tokens: ${remote.tokens.reason}`
        },
        {
            key: "window",
            text:
                remote.window.kind === "known"
                    ? `Window ${formatCount(remote.window.tokens)} from ${remote.window.source}`
                    : `Window: ${remote.window.reason}`
        },
        {
            key: "kv",
            text:
                remote.kvUsage.kind === "known"
                    ? `Server KV cache ${Math.round(remote.kvUsage.ratio * 1000) / 10}% in use (all its requests), from ${remote.kvUsage.source}`
                    : `KV usage not shown: ${remote.kvUsage.reason}`
        }
    ];
}
