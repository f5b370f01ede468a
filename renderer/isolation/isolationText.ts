import {
    failureModeNames,
    type AuditSummary,
    type CanaryProbeResult,
    type CanaryReport,
    type DrillReport,
    type FailureModeSlug,
    type ReplaySummary
} from "../../contract/isolation.js";
import { formatCount, formatTokens } from "../util/formatCount.js";

/** "0.4 ms", "12 ms", "9.8 s". */
export function formatDuration(ms: number): string {
    if (ms < 10) {
        return `${Math.max(0, ms).toFixed(1)} ms`;
    }
    if (ms < 1_000) {
        return `${Math.round(ms)} ms`;
    }
    return `${(ms / 1_000).toFixed(1)} s`;
}

/** The audit's verdict in a few words. */
export function auditHeadline(summary: AuditSummary): string {
    if (summary.ok) {
        return "OK: I1–I7 hold";
    }
    return `${formatCount(summary.numViolations)} ${summary.numViolations === 1 ? "violation" : "violations"} of I1–I7`;
}

/** What the audit looked at, and how long it took. */
export function auditScope(summary: AuditSummary): string {
    return (
        `${formatCount(summary.numPagesChecked)} ${summary.numPagesChecked === 1 ? "page" : "pages"} checked ` +
        `(${formatCount(summary.numSealedPagesVerified)} sealed re-checksummed, ${formatCount(summary.numFreePagesScanned)} free scanned for zeros) ` +
        `in ${formatDuration(summary.durationMs)}`
    );
}

/** "0.021 µs", "1.4 µs", "12 µs": a per-page cost. */
export function formatMicros(us: number): string {
    if (us < 0.1) {
        return `${Math.max(0, us).toFixed(3)} µs`;
    }
    if (us < 10) {
        return `${us.toFixed(1)} µs`;
    }
    return `${Math.round(us)} µs`;
}

/**
 * What the audit cost the engine's thread, per page, and the longest it held it at once: "metadata
 * 0.021 µs a page, byte scan 0.4 µs a page in 3 slices, longest pause 0.9 ms". Undefined for an
 * engine that does not report it.
 */
export function auditCost(summary: AuditSummary): string | undefined {
    const cost = summary.cost;
    if (cost === undefined || summary.numPagesChecked === 0) {
        return undefined;
    }
    const numScanned = summary.numFreePagesScanned + summary.numSealedPagesVerified;
    const metadata = `metadata ${formatMicros((cost.metadataMs * 1_000) / summary.numPagesChecked)} a page`;
    const scan =
        numScanned === 0
            ? "no byte scan"
            : `byte scan ${formatMicros((cost.byteScanMs * 1_000) / numScanned)} a page in ${formatCount(cost.numSlices)} ${cost.numSlices === 1 ? "slice" : "slices"}`;
    const changed =
        (summary.numPagesChangedDuringScan ?? 0) > 0
            ? `; ${formatCount(summary.numPagesChangedDuringScan!)} changed during the scan, skipped`
            : "";
    return `${metadata}, ${scan}, longest pause ${formatDuration(cost.longestPauseMs)}${changed}`;
}

/** The canary run's verdict in a few words. */
export function canaryHeadline(report: CanaryReport): string {
    const failed = report.probes.filter((probe) => probe.outcome === "failed").length;
    if (failed > 0) {
        return `LEAK: ${failed} of ${report.probes.length} probes found workspace A's data in workspace B`;
    }
    const passed = report.probes.filter((probe) => probe.outcome === "passed").length;
    return `Passed: ${passed} of ${report.probes.length} probes found nothing of A in B`;
}

/** What A was sent: "460-token prompt, 362 of filler, 29 pages of 16 tokens". */
export function canaryScope(report: CanaryReport): string {
    const pages =
        report.numPagesA === 0
            ? "evaluated in place"
            : `${formatCount(report.numPagesA)} ${report.numPagesA === 1 ? "page" : "pages"} of ${formatCount(report.pageTokens)} tokens`;
    return `A: ${formatTokens(report.promptTokens)} of prompt, ${formatCount(report.fillerTokens)} of filler between the markers, ${pages}`;
}

/** A probe's figures as a line: "numRowMatches 0 · numSecretRows 457". */
export function probeNumbers(probe: CanaryProbeResult): string {
    return Object.entries(probe.numbers)
        .map(([name, value]) => `${name} ${Number.isInteger(value) ? formatCount(value) : value.toFixed(4)}`)
        .join(" · ");
}

/** Violations the engine counted beyond those it listed (it sends the first 20). */
export function unlistedViolations(summary: AuditSummary): number {
    return Math.max(0, summary.numViolations - summary.violations.length);
}

/** A token's text as it can be read inside quotes: whitespace and control characters made visible. */
export function visibleToken(text: string): string {
    if (text === "") {
        return "nothing";
    }
    const escaped = text
        .replace(/[\n\r\t]/g, (character) => ({ "\n": "\\n", "\r": "\\r", "\t": "\\t" })[character]!)
        .replace(/\p{Cc}/gu, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
    return `“${escaped}”`;
}

/** "Identical over 5 tokens", or where and how the replay first differed from what was served. */
export function replayVerdict(summary: ReplaySummary): string {
    if (summary.identical) {
        return `Identical over ${formatTokens(summary.numTokens)}`;
    }
    const divergence = summary.firstDivergence;
    if (divergence === undefined) {
        return `Differs from what was served (${formatTokens(summary.numTokens)})`;
    }
    return (
        `Diverged at token ${formatCount(divergence.index + 1)} of ${formatCount(summary.numTokens)}: ` +
        `served ${visibleToken(divergence.served)}, replayed ${visibleToken(divergence.replayed)}`
    );
}

/** A drill's report as the panel reads it out, line by line, and whether the drill passed. */
export interface DrillVerdict {
    /** The guard caught it (or held) and the victim stayed clean, and the drill has teeth: with the guard off the leak was seen. */
    readonly passed: boolean;
    readonly guard: string;
    readonly victim: string;
    readonly leak: string;
}

export function drillVerdict(report: DrillReport): DrillVerdict {
    const guard = !report.guardFired
        ? "Guard did not fire"
        : report.guardError === null
          ? "Guard held: the request was served and nothing of another request reached it"
          : `Guard fired: ${report.guardError.code}`;
    return {
        passed: report.guardFired && report.victimClean && report.leakObservedWithGuardOff,
        guard,
        victim: report.victimClean
            ? "Victim clean: no byte of another request reached its KV or output"
            : "Victim NOT clean: another request's data reached it",
        leak: report.leakObservedWithGuardOff ? "Leak observed with the guard off" : "No leak with the guard off: the drill has no teeth"
    };
}

/**
 * "Failure modes: decode over stale pages, foreign manifest", by name (docs/FAILURE-MODES.md). A slug
 * this renderer does not know (from a newer engine) is shown as it came.
 */
export function failureModesText(modes: readonly FailureModeSlug[]): string {
    const names = modes.map((mode) => (failureModeNames as Readonly<Record<string, string>>)[mode] ?? mode);
    return `${modes.length === 1 ? "Failure mode" : "Failure modes"}: ${names.join(", ")}`;
}

/** A request id short enough for the panel: "turn-1a2b3c4d…". */
export function shortRequestId(requestId: string): string {
    return requestId.length <= 13 ? requestId : `${requestId.slice(0, 13)}…`;
}
