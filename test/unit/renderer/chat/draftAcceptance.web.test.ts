import { describe, expect, it } from "vitest";
import { draftAcceptance } from "../../../../renderer/chat/draftAcceptance.js";

const usage = { promptTokens: 40, cachedPromptTokens: 0, evaluatedPromptTokens: 40, completionTokens: 30 };

describe("draftAcceptance", () => {
    it("says how many drafted tokens the model accepted, of how many", () => {
        expect(draftAcceptance({ ...usage, acceptedDraftTokens: 12, rejectedDraftTokens: 8 })).toBe("drafts 12 of 20 accepted (60 %)");
        expect(draftAcceptance({ ...usage, acceptedDraftTokens: 1_200, rejectedDraftTokens: 0 })).toBe(
            "drafts 1,200 of 1,200 accepted (100 %)"
        );
    });

    it("says nothing was drafted, and nothing at all for an engine that does not speculate", () => {
        expect(draftAcceptance({ ...usage, acceptedDraftTokens: 0, rejectedDraftTokens: 0 })).toBe("no drafts");
        expect(draftAcceptance(usage)).toBeUndefined();
    });
});
