import { describe, expect, it } from "vitest";
import { OpenAiError } from "../../../../../host/http/OpenAiError.js";
import { parseResponseInput } from "../../../../../host/http/responses/parseResponseInput.js";
import { StoredResponses, storedResponsesLimits } from "../../../../../host/http/responses/StoredResponses.js";

const user = (content: string) => ({ role: "user" as const, content });

describe("StoredResponses", () => {
    it("keeps the last responses of each workspace and forgets the oldest past the bound", () => {
        const stored = new StoredResponses();
        for (let index = 0; index <= storedResponsesLimits.maxPerWorkspace; index++) {
            stored.store("w", `resp_${index}`, [user(String(index))]);
        }
        expect(() => stored.conversation("w", "resp_0")).toThrow(OpenAiError);
        expect(stored.conversation("w", `resp_${storedResponsesLimits.maxPerWorkspace}`)).toEqual([
            user(String(storedResponsesLimits.maxPerWorkspace))
        ]);
        expect(() => stored.conversation("other", "resp_1")).toThrow(/is not a response stored in this workspace/);
    });

    it("forgets the least recently used workspace past the bound", () => {
        const stored = new StoredResponses();
        stored.store("first", "resp_a", [user("a")]);
        stored.store("second", "resp_b", [user("b")]);
        stored.conversation("first", "resp_a"); // used again: the second is now the oldest
        for (let index = 0; index < storedResponsesLimits.maxWorkspaces - 1; index++) {
            stored.store(`w${index}`, "resp", [user("x")]);
        }
        expect(stored.conversation("first", "resp_a")).toEqual([user("a")]);
        expect(() => stored.conversation("second", "resp_b")).toThrow(OpenAiError);
    });
});

describe("parseResponseInput", () => {
    it("answers a stored answer's calls with function_call_output items", () => {
        const prior = [
            user("Weather?"),
            { role: "assistant" as const, content: "", toolCalls: [{ id: "call_1", name: "get_weather", arguments: "{}" }] }
        ];
        expect(parseResponseInput([{ type: "function_call_output", call_id: "call_1", output: "Sunny" }], prior)).toEqual([
            user("Weather?"),
            { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "get_weather", arguments: "{}", result: "Sunny" }] }
        ]);
        expect(() => parseResponseInput([{ type: "function_call_output", call_id: "call_2", output: "x" }], prior)).toThrow(
            /call_id must be the call_id/
        );
        expect(() => parseResponseInput([{ type: "reasoning", summary: [] }], [])).toThrow(/input\[0\].type "reasoning" is not served/);
        expect(() => parseResponseInput([{ role: "user", content: "Hi", name: "x" }], [])).toThrow(/input\[0\].name is not served/);
    });
});
