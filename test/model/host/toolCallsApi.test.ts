import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localEngine } from "../../../engine/process/localEngine.js";
import { parseTemplateCalls } from "../../../host/http/templateToolCalls.js";
import { ensureFamilyModel } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "test-key-0123456789";

const weather: OpenAI.ChatCompletionTool = {
    type: "function",
    function: {
        name: "get_weather",
        description: "The weather in a city.",
        parameters: {
            type: "object",
            properties: { city: { enum: ["Oslo", "Lima"] }, days: { enum: [1, 2, 3] } },
            required: ["city", "days"],
            additionalProperties: false
        }
    }
};
const time: OpenAI.ChatCompletionTool = {
    type: "function",
    function: { name: "get_time", parameters: { type: "object", properties: { zone: { enum: ["UTC", "CET"] } }, required: ["zone"] } }
};

/** The weather tool's parameters, checked by hand. */
function weatherArguments(text: string): boolean {
    const value = JSON.parse(text) as Record<string, unknown>;
    return (
        Object.keys(value).sort().join(",") === "city,days" &&
        ["Oslo", "Lima"].includes(value.city as string) &&
        [1, 2, 3].includes(value.days as number)
    );
}

describe("tools on the OpenAI API, driven by the official openai client", () => {
    let api: InProcessApiServer | undefined;
    let client: OpenAI;
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Oslo?" }];

    beforeAll(async () => {
        api = await startInProcessApiServer({ apiKey: API_KEY });
        client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
    }, 120_000);
    afterAll(async () => {
        await api?.close();
    });

    it("makes a required call with arguments of the tool's schema, even from random weights", async () => {
        const whole = await client.chat.completions.create({
            model: "tiny",
            messages,
            tools: [weather, time],
            tool_choice: { type: "function", function: { name: "get_weather" } },
            max_tokens: 200,
            temperature: 0
        });
        const choice = whole.choices[0]!;
        expect(choice.finish_reason).toBe("tool_calls");
        expect(choice.message.content).toBeNull();
        expect(choice.message.tool_calls).toHaveLength(1);
        const call = choice.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
        expect(call.type).toBe("function");
        expect(call.id).toMatch(/^call_/);
        expect(call.function.name).toBe("get_weather");
        expect(weatherArguments(call.function.arguments), call.function.arguments).toBe(true);

        const required = await client.chat.completions.create({
            model: "tiny",
            messages,
            tools: [weather, time],
            tool_choice: "required",
            parallel_tool_calls: false,
            max_tokens: 200,
            temperature: 1,
            seed: 3
        });
        expect(required.choices[0]!.finish_reason).toBe("tool_calls");
        expect(required.choices[0]!.message.tool_calls).toHaveLength(1);
        expect(["get_weather", "get_time"]).toContain(
            (required.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.name
        );
    }, 300_000);

    it("streams a required call as OpenAI's tool-call deltas, the same call as unstreamed", async () => {
        const request = {
            model: "tiny",
            messages,
            tools: [weather],
            tool_choice: "required" as const,
            max_tokens: 200,
            temperature: 0
        };
        const whole = await client.chat.completions.create(request);
        const stream = await client.chat.completions.create({ ...request, stream: true });
        const calls: { id?: string; name: string; arguments: string }[] = [];
        let finishReason: string | null = null;
        let content = "";
        for await (const chunk of stream) {
            const delta = chunk.choices[0]?.delta;
            content += delta?.content ?? "";
            for (const part of delta?.tool_calls ?? []) {
                calls[part.index] ??= { name: "", arguments: "" };
                const call = calls[part.index]!;
                call.id = part.id ?? call.id;
                call.name += part.function?.name ?? "";
                call.arguments += part.function?.arguments ?? "";
            }
            finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
        }
        expect(content).toBe("");
        expect(finishReason).toBe("tool_calls");
        expect(calls).toHaveLength(1);
        expect(calls[0]!.id).toMatch(/^call_/);
        expect(calls[0]!.name).toBe("get_weather");
        expect(weatherArguments(calls[0]!.arguments), calls[0]!.arguments).toBe(true);
        const unstreamed = whole.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
        expect(calls[0]!.arguments).toBe(unstreamed.function.arguments);
    }, 300_000);

    it("under auto, serves an answer that is not a call as its text, streamed and not, the same text", async () => {
        const request = { model: "tiny", messages, tools: [weather], max_tokens: 12, temperature: 0 };
        const whole = await client.chat.completions.create(request);
        const stream = await client.chat.completions.create({ ...request, stream: true });
        let streamed = "";
        let finishReason: string | null = null;
        for await (const chunk of stream) {
            streamed += chunk.choices[0]?.delta.content ?? "";
            expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
            finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
        }
        // random weights do not write the call shape: text, held back while it might have been one, then sent whole
        expect(whole.choices[0]!.message.tool_calls).toBeUndefined();
        expect(whole.choices[0]!.finish_reason).toBe("length");
        expect(streamed).toBe(whole.choices[0]!.message.content);
        expect(finishReason).toBe("length");
    }, 300_000);

    it("answers a tool result in the history, and the result changes the prompt", async () => {
        const history = (result: string): OpenAI.ChatCompletionMessageParam[] => [
            ...messages,
            {
                role: "assistant",
                content: null,
                tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo","days":1}' } }]
            },
            { role: "tool", tool_call_id: "call_1", content: result }
        ];
        const sunny = await client.chat.completions.create({
            model: "tiny",
            messages: history("Sunny, 21 C"),
            tools: [weather],
            max_tokens: 4,
            temperature: 0
        });
        const rainy = await client.chat.completions.create({
            model: "tiny",
            messages: history("Rain all week, 9 C and windy"),
            tools: [weather],
            max_tokens: 4,
            temperature: 0
        });
        expect(sunny.choices[0]!.finish_reason).not.toBe("tool_calls");
        expect(typeof sunny.choices[0]!.message.content).toBe("string");
        // the result is in the prompt the model answers
        expect(rainy.usage!.prompt_tokens).toBeGreaterThan(sunny.usage!.prompt_tokens);
        // the tool section is in the prompt: the same history without tools is shorter
        const bare = await client.chat.completions.create({
            model: "tiny",
            messages: history("Sunny, 21 C"),
            max_tokens: 4,
            temperature: 0
        });
        expect(bare.usage!.prompt_tokens).toBeLessThan(sunny.usage!.prompt_tokens);
    }, 300_000);

    it("refuses tool fields it cannot serve, naming them", async () => {
        const refused = async (fields: Record<string, unknown>): Promise<{ param: string | null; message: string }> => {
            const error = await client.chat.completions
                .create({ model: "tiny", messages, max_tokens: 2, ...fields } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
                .then(
                    () => undefined,
                    (caught: unknown) => caught
                );
            expect(error).toBeInstanceOf(OpenAI.BadRequestError);
            const body = (error as InstanceType<typeof OpenAI.BadRequestError>).error as { param: string | null; message: string };
            return { param: body.param, message: body.message };
        };
        expect((await refused({ tools: [{ type: "custom", custom: { name: "x" } }] })).param).toBe("tools[0].type");
        expect((await refused({ tool_choice: "required" })).param).toBe("tool_choice");
        expect((await refused({ tools: [weather], tool_choice: { type: "function", function: { name: "nope" } } })).param).toBe(
            "tool_choice.function.name"
        );
        const pattern = await refused({
            tools: [
                {
                    type: "function",
                    function: { name: "f", parameters: { type: "object", properties: { a: { type: "string", pattern: "^a$" } } } }
                }
            ]
        });
        expect(pattern.param).toBe("tools[0].function.parameters.properties.a.pattern");
        const orphan = await refused({ messages: [...messages, { role: "tool", tool_call_id: "call_9", content: "x" }] });
        expect(orphan.param).toBe("messages[1].role");
        const unanswered = await refused({
            messages: [
                ...messages,
                {
                    role: "assistant",
                    content: null,
                    tool_calls: [{ id: "c", type: "function", function: { name: "get_weather", arguments: "{}" } }]
                },
                { role: "user", content: "and?" }
            ]
        });
        expect(unanswered.param).toBe("messages[1].tool_calls[0]");
        expect((await refused({ tools: [weather], tool_choice: "required", response_format: { type: "json_object" } })).param).toBe(
            "response_format"
        );
    });
});

// Real chat templates write calls in their own syntax (Llama 3.2's {"name", "parameters"}, Qwen's
// <tool_call> JSON): a required call is held to that syntax by its grammar, and read back from it.
describe.each([
    { preset: "llama3-tiny" as const, prefix: '{"name": "', paramsPrefix: '"parameters": ' },
    { preset: "qwen3-tiny" as const, prefix: "<tool_call>", paramsPrefix: '"arguments": ' }
])("tools on the OpenAI API with $preset's own call syntax", ({ preset, prefix, paramsPrefix }) => {
    let api: InProcessApiServer | undefined;
    let client: OpenAI;
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Oslo?" }];

    beforeAll(async () => {
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            engine: {
                modelPath: ensureFamilyModel(preset, "q8_0"),
                window: 1024,
                prefillContextSize: 1024,
                decodeContextSize: 1024,
                numDecodeSequences: 1,
                pageTokens: 16,
                numPages: 192,
                flashAttention: false,
                gpu: false
            },
            server: { modelId: preset }
        });
        client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
    }, 300_000);
    afterAll(async () => {
        await api?.close();
    });

    it("reports the template's syntax, and a grammar of it makes a call written in it that parses back", async () => {
        const syntax = api!.service.info().toolCallSyntax!;
        expect(syntax.prefixes[0]).toContain(prefix);
        expect(syntax.paramsPrefix).toContain(paramsPrefix);
        const result = await localEngine(api!.service).chat({
            requestId: "syntax",
            workspace: "syntax",
            messages: [{ role: "user", content: "Weather in Oslo?" }],
            tools: [{ name: "get_weather", parameters: weather.function.parameters! }],
            sampling: {
                temperature: 0,
                maxTokens: 200,
                grammar: { kind: "toolCalls", syntax, calls: [{ name: "get_weather", schema: weather.function.parameters! }], maxCalls: 1 }
            }
        });
        expect(result.text, result.text).toContain(prefix);
        expect(result.text, result.text).toContain(paramsPrefix);
        const calls = parseTemplateCalls(result.text, syntax);
        expect(calls, result.text).toHaveLength(1);
        expect(calls![0]!.name).toBe("get_weather");
        expect(weatherArguments(JSON.stringify(calls![0]!.arguments)), result.text).toBe(true);
    }, 300_000);

    it("serves a named and a required call from the template's syntax, streamed the same as unstreamed", async () => {
        const request = {
            model: preset,
            messages,
            tools: [weather],
            tool_choice: { type: "function" as const, function: { name: "get_weather" } },
            max_tokens: 200,
            temperature: 0
        };
        const whole = await client.chat.completions.create(request);
        expect(whole.choices[0]!.finish_reason).toBe("tool_calls");
        expect(whole.choices[0]!.message.content).toBeNull();
        const unstreamed = whole.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
        expect(unstreamed.function.name).toBe("get_weather");
        expect(weatherArguments(unstreamed.function.arguments), unstreamed.function.arguments).toBe(true);

        const stream = await client.chat.completions.create({ ...request, stream: true });
        let name = "";
        let args = "";
        let content = "";
        let finishReason: string | null = null;
        for await (const chunk of stream) {
            const delta = chunk.choices[0]?.delta;
            content += delta?.content ?? "";
            for (const part of delta?.tool_calls ?? []) {
                expect(part.index).toBe(0);
                name += part.function?.name ?? "";
                args += part.function?.arguments ?? "";
            }
            finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
        }
        expect(content).toBe("");
        expect(finishReason).toBe("tool_calls");
        expect(name).toBe("get_weather");
        expect(args).toBe(unstreamed.function.arguments);

        const required = await client.chat.completions.create({
            model: preset,
            messages,
            tools: [weather, time],
            tool_choice: "required",
            max_tokens: 300,
            temperature: 1,
            seed: 5
        });
        expect(required.choices[0]!.finish_reason).toBe("tool_calls");
        const calls = required.choices[0]!.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
        expect(calls.length).toBeGreaterThanOrEqual(1);
        for (const call of calls) {
            expect(["get_weather", "get_time"]).toContain(call.function.name);
            if (call.function.name === "get_weather") {
                expect(weatherArguments(call.function.arguments), call.function.arguments).toBe(true);
            } else {
                expect(["UTC", "CET"]).toContain((JSON.parse(call.function.arguments) as { zone: string }).zone);
            }
        }
    }, 300_000);
});
