import type { DraftMeasurement } from "../../contract/engineProtocol.js";
import { formatCount, formatTokens } from "../util/formatCount.js";

export interface MeterReading {
    readonly limit: number;
    readonly usedTokens: number;
    readonly draftTokens: number;
    /** Tokens left before the draft: `limit − used`. */
    readonly leftTokens: number;
    /** Tokens left after the draft, for the answer: `limit − used − draft` (negative when it does not fit). */
    readonly remainingTokens: number;
    /** Why Send is off, with the numbers and what to do; undefined when the turn fits. */
    readonly blockedBecause: string | undefined;
}

/**
 * What the context meter says about a measured draft. A turn fits when the conversation, the
 * draft and `maxTokens` of answer fit in the limit: the engine admits nothing else
 * (docs/ARCHITECTURE.md, Admission), so the meter says so before the engine has to.
 */
export function meterReading(measurement: DraftMeasurement, maxTokens: number): MeterReading {
    const { limit, usedTokens, draftTokens, remainingTokens } = measurement;
    const leftTokens = limit - usedTokens;
    return { limit, usedTokens, draftTokens, leftTokens, remainingTokens, blockedBecause: blockedBecause() };

    function blockedBecause(): string | undefined {
        if (leftTokens <= 0) {
            return `This workspace's conversation uses ${formatCount(usedTokens)} of its ${formatTokens(limit)}; nothing is left for a message. Clear the chat or start a new workspace.`;
        }
        if (!measurement.fits) {
            return `This message needs ${formatTokens(draftTokens)}; ${formatCount(Math.max(0, leftTokens))} are left of ${formatCount(limit)}. Shorten it or start a new workspace.`;
        }
        if (remainingTokens < maxTokens) {
            return (
                `The answer may take up to ${formatTokens(maxTokens)} (Max tokens), but only ${formatCount(remainingTokens)} are left after this message (window ${formatCount(limit)}). ` +
                `Lower Max tokens to ${formatCount(remainingTokens)} or less, or shorten the message.`
            );
        }
        return undefined;
    }
}
