import type { TurnUsage } from "../../contract/engineProtocol.js";
import { formatCount } from "../util/formatCount.js";

/**
 * How speculative decoding did for an answer: "drafts 12 of 20 accepted (60 %)", or that nothing
 * was drafted. Undefined when the engine that answered did not speculate.
 */
export function draftAcceptance(usage: TurnUsage): string | undefined {
    if (usage.acceptedDraftTokens === undefined) {
        return undefined;
    }
    const drafted = usage.acceptedDraftTokens + (usage.rejectedDraftTokens ?? 0);
    if (drafted === 0) {
        return "no drafts";
    }
    const percent = Math.round((100 * usage.acceptedDraftTokens) / drafted);
    return `drafts ${formatCount(usage.acceptedDraftTokens)} of ${formatCount(drafted)} accepted (${percent} %)`;
}
