// What a run sent and got, the verdict per probe, and the two forms it is given in: text for a
// person (stdout) and JSON for CI (--json).
import { EXCERPT_CHARS, type ScoredToken } from "./EndpointClient.js";
import { describeCost, type CostEstimate, type Identity, type ProbeId } from "./probePlan.js";
import type { Verdict } from "./probeVerdicts.js";

export const PROBE_REPORT_VERSION = 1;

export interface ExchangeRecord {
    readonly probe: ProbeId;
    readonly identity: Identity;
    /** The `user` value sent. */
    readonly user: string;
    readonly sent: {
        readonly targetTokens: number;
        readonly promptChars: number;
        /** This identity's markers in the prompt. */
        readonly markers: readonly string[];
        readonly stream: boolean;
    };
    readonly got: {
        readonly status: number;
        readonly promptTokens?: number;
        readonly completionTokens?: number;
        /** The answer's first characters (EXCERPT_CHARS at most). */
        readonly excerpt: string;
        /** The chosen tokens with their log-probabilities, where they were asked for and given. */
        readonly scoredTokens?: readonly ScoredToken[];
        readonly error?: string;
        readonly aborted?: boolean;
    };
    /** The other identity's markers this answer gave away: anything here is a finding. */
    readonly foreignMarkers: readonly string[];
    readonly elapsedMs: number;
}

export interface ProbeResult {
    readonly id: string;
    readonly title: string;
    readonly verdict: Verdict;
    readonly reason: string;
}

export interface ProbeReport {
    readonly version: typeof PROBE_REPORT_VERSION;
    readonly url: string;
    readonly model: string;
    readonly endpoint: string;
    /** How the two identities differ: two keys, or one key (or none) and two `user` values. */
    readonly identities: string;
    readonly window: number;
    readonly windowSource: string;
    readonly maxTokens: number;
    readonly estimate: CostEstimate;
    readonly calibration: { readonly overheadTokens: number; readonly charsPerToken: number; readonly measured: boolean };
    readonly startedAt: string;
    readonly elapsedMs: number;
    readonly exchanges: readonly ExchangeRecord[];
    readonly probes: readonly ProbeResult[];
    /** finding when any probe has one; inconclusive when none passed… see exitCodeOf. */
    readonly verdict: Verdict;
}

/** 0: no finding (inconclusive probes say why in the report); 1: a finding. 2 is for a run that could not start. */
export function exitCodeOf(report: Pick<ProbeReport, "verdict">): 0 | 1 {
    return report.verdict === "finding" ? 1 : 0;
}

export function excerptOf(text: string): string {
    return text.length <= EXCERPT_CHARS ? text : `${text.slice(0, EXCERPT_CHARS)}…`;
}

const LABEL: Readonly<Record<Verdict, string>> = { pass: "PASS", finding: "FINDING", inconclusive: "INCONCLUSIVE" };

/** The report as a person reads it: the setup, every exchange on one or two lines, then the verdicts. */
export function formatReport(report: ProbeReport): string {
    const lines = [
        `Leak probe of ${report.url}, model ${report.model} (${report.endpoint} endpoint)`,
        `Identities: ${report.identities}. Window: ${report.window.toLocaleString("en-US")} tokens (${report.windowSource}).`,
        `Planned: ${describeCost(report.estimate)}; --max-tokens ${report.maxTokens}.`,
        `Lengths: ${report.calibration.measured ? "measured" : "estimated (the server gave no usage counts)"} at ${report.calibration.charsPerToken.toFixed(2)} characters a token, ${report.calibration.overheadTokens} tokens of template and question.`,
        "",
        "Sent and received:"
    ];
    for (const exchange of report.exchanges) {
        const { sent, got } = exchange;
        const counts =
            got.promptTokens === undefined ? "" : ` (${got.promptTokens} prompt + ${got.completionTokens ?? "?"} completion tokens)`;
        lines.push(
            `  ${exchange.probe.padEnd(12)} ${exchange.identity} ~${sent.targetTokens} tokens, ${sent.promptChars} chars${sent.stream ? ", streamed" : ""}` +
                `${sent.markers.length > 0 ? `, markers ${sent.markers.join(" ")}` : ""} -> ${got.status === 0 ? (got.aborted ? "cancelled before the headers" : "no answer") : got.status}${got.aborted && got.status !== 0 ? ", then cancelled" : ""}${counts}`
        );
        const said = got.error ?? got.excerpt;
        if (said !== "") {
            lines.push(`      ${JSON.stringify(said.slice(0, 160))}`);
        }
        if (exchange.foreignMarkers.length > 0) {
            lines.push(`      gave away the other identity's ${exchange.foreignMarkers.join(", ")}`);
        }
    }
    lines.push("", "Verdicts:");
    for (const probe of report.probes) {
        lines.push(`  ${LABEL[probe.verdict].padEnd(12)} ${probe.title}: ${probe.reason}`);
    }
    const findings = report.probes.filter((probe) => probe.verdict === "finding").length;
    lines.push(
        "",
        findings > 0
            ? `Result: ${findings} finding${findings > 1 ? "s" : ""} (exit 1).`
            : `Result: no finding (exit 0)${report.verdict === "inconclusive" ? "; some probes were inconclusive, see above" : ""}.`,
        ""
    );
    return lines.join("\n");
}
