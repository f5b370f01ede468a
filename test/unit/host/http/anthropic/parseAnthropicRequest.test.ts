import { describe, expect, it } from "vitest";
import { anthropicStatus } from "../../../../../host/http/anthropic/anthropicErrors.js";
import { parseAnthropicRequest } from "../../../../../host/http/anthropic/parseAnthropicRequest.js";
import { OpenAiError } from "../../../../../host/http/OpenAiError.js";

const weather = { name: "get_weather", input_schema: { type: "object", properties: { city: { enum: ["Oslo"] } }, required: ["city"] } };

function refusal(body: unknown): OpenAiError {
    try {
        parseAnthropicRequest(body);
    } catch (error) {
        expect(error).toBeInstanceOf(OpenAiError);
        return error as OpenAiError;
    }
    throw new Error("the body was not refused");
}

describe("parseAnthropicRequest", () => {
    it("folds a tool_result into the tool_use it answers, with the system prompt first", () => {
        const request = parseAnthropicRequest({
            model: "tiny",
            max_tokens: 16,
            system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
            messages: [
                { role: "user", content: "Weather?" },
                {
                    role: "assistant",
                    content: [
                        { type: "text", text: "Let me look." },
                        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }
                    ]
                },
                {
                    role: "user",
                    content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "Sunny" }], is_error: false }]
                }
            ],
            tools: [weather],
            tool_choice: { type: "any", disable_parallel_tool_use: true },
            metadata: { user_id: "agent-1" }
        });
        expect(request.messages).toEqual([
            { role: "system", content: "Be brief." },
            { role: "user", content: "Weather?" },
            {
                role: "assistant",
                content: "Let me look.",
                toolCalls: [{ id: "toolu_1", name: "get_weather", arguments: '{"city":"Oslo"}', result: "Sunny" }]
            }
        ]);
        expect(request.userId).toBe("agent-1");
        expect(request.tools?.choice).toBe("required");
        expect(request.tools?.parallel).toBe(false);
        expect(request.sampling.grammar?.kind).toBe("jsonSchema");
    });

    it("refuses unknown fields, blocks and a prefill by name, and requires max_tokens", () => {
        const base = { model: "tiny", max_tokens: 4, messages: [{ role: "user", content: "Hi" }] };
        expect(refusal({ ...base, container: "c" }).message).toMatch(/^container is not served by Kvault/);
        expect(refusal({ ...base, container: "c" }).param).toBe("container");
        expect(refusal({ ...base, thinking: { type: "enabled", budget_tokens: 1024 } }).param).toBe("thinking");
        expect(refusal({ ...base, metadata: { user_id: "a", plan: "x" } }).param).toBe("metadata.plan");
        expect(refusal({ ...base, tools: [{ type: "web_search_20250305", name: "web_search" }] }).param).toBe("tools[0].type");
        expect(refusal({ ...base, tools: [weather], tool_choice: { type: "tool", name: "other" } }).message).toContain(
            "tool_choice names the function"
        );
        expect(refusal({ ...base, messages: [{ role: "user", content: [{ type: "image", source: {} }] }] }).param).toBe(
            "messages[0].content[0].type"
        );
        expect(refusal({ ...base, messages: [...base.messages, { role: "assistant", content: "Sure" }] }).message).toContain(
            "prefilled assistant message"
        );
        expect(refusal({ ...base, temperature: 1.5 }).param).toBe("temperature");
        expect(refusal({ model: "tiny", messages: base.messages }).message).toMatch(/^max_tokens is required/);
        const unanswered = refusal({
            ...base,
            messages: [
                { role: "user", content: "Weather?" },
                { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: {} }] },
                { role: "user", content: "Never mind." }
            ]
        });
        expect(unanswered.message).toContain("no tool_result answers it");
        // count_tokens takes no max_tokens, and refuses sampling fields by name
        expect(parseAnthropicRequest({ model: "tiny", messages: base.messages }, true).messages).toHaveLength(1);
        expect(() => parseAnthropicRequest({ ...base }, true)).toThrow(/^max_tokens is not served by Kvault/);
    });

    it("maps Kvault's refusals to Anthropic's statuses and types", () => {
        const of = (status: number) => anthropicStatus(new OpenAiError(status, "m", "server_error", null));
        expect([400, 401, 403, 404, 413, 429, 499, 500, 503, 504].map((status) => [status, of(status).status, of(status).type])).toEqual([
            [400, 400, "invalid_request_error"],
            [401, 401, "authentication_error"],
            [403, 403, "permission_error"],
            [404, 404, "not_found_error"],
            [413, 413, "request_too_large"],
            [429, 429, "rate_limit_error"],
            [499, 400, "invalid_request_error"],
            [500, 500, "api_error"],
            [503, 529, "overloaded_error"],
            [504, 504, "timeout_error"]
        ]);
    });
});
