import Anthropic, { APIError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeys } from "../../../host/http/ApiKeys.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "test-key-0123456789";
/** Greedy sampling, so that two answers to one prompt are the same (the SDK's types leave temperature out for newer models). */
const greedy = { temperature: 0 };
const ALICE_KEY = "alice-key-0123456789";

const weather: Anthropic.Tool = {
    name: "get_weather",
    description: "The weather in a city.",
    input_schema: {
        type: "object",
        properties: { city: { enum: ["Oslo", "Lima"] }, days: { enum: [1, 2, 3] } },
        required: ["city", "days"],
        additionalProperties: false
    }
};

function isWeatherInput(input: unknown): boolean {
    const value = input as Record<string, unknown>;
    return (
        Object.keys(value).sort().join(",") === "city,days" &&
        ["Oslo", "Lima"].includes(value.city as string) &&
        [1, 2, 3].includes(value.days as number)
    );
}

/** The error body an Anthropic client was given, in Anthropic's shape. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; type: string; message: string }> {
    const error = await call.then(
        () => undefined,
        (failure: unknown) => failure
    );
    expect(error).toBeInstanceOf(APIError);
    const body = (error as APIError).error as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    return { status: (error as APIError).status!, type: body.error.type, message: body.error.message };
}

describe("Anthropic's Messages API, driven by the official @anthropic-ai/sdk client", () => {
    let api: InProcessApiServer | undefined;
    let url: string;
    let client: Anthropic;
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Weather in Oslo?" }];

    beforeAll(async () => {
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            server: {
                extraApiKeys: new ApiKeys([{ id: "alice", key: ALICE_KEY }]),
                // the clients keep connections alive between requests: on a loaded machine one reused as the
                // server's idle timeout closes it would be reset, so none closes while a test runs
                idleTimeoutMs: 120_000
            }
        });
        url = api.url;
        client = new Anthropic({ baseURL: url, apiKey: API_KEY, maxRetries: 0 });
    }, 120_000);
    afterAll(async () => {
        await api?.close();
    });

    it("answers a message whole and streamed in Anthropic's event sequence, the same text, with x-api-key or Bearer", async () => {
        const request = { model: "tiny", system: "Be brief.", messages, max_tokens: 8, ...greedy };
        const whole = await client.messages.create(request);
        expect(whole.type).toBe("message");
        expect(whole.id).toMatch(/^msg_/);
        expect(whole.role).toBe("assistant");
        expect(whole.content).toHaveLength(1);
        expect(whole.content[0]!.type).toBe("text");
        expect(whole.stop_reason).toBe("max_tokens");
        expect(whole.usage.output_tokens).toBe(8);
        expect(whole.usage.input_tokens).toBeGreaterThan(0);

        // the raw stream, ping included (the SDK drops pings)
        const raw = await fetch(`${url}/v1/messages`, {
            method: "POST",
            headers: { "x-api-key": API_KEY, "anthropic-version": "2023-06-01", "Content-Type": "application/json" },
            body: JSON.stringify({ ...request, stream: true })
        });
        expect(raw.headers.get("content-type")).toContain("text/event-stream");
        const types = [...(await raw.text()).matchAll(/^event: (\S+)$/gm)].map((match) => match[1]);
        expect(types.slice(0, 3)).toEqual(["message_start", "content_block_start", "ping"]);
        expect(types.slice(3, -3).every((type) => type === "content_block_delta")).toBe(true);
        expect(types.slice(3, -3).length).toBeGreaterThan(0);
        expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);

        const streamed = await client.messages.stream(request).finalMessage();
        expect(streamed.content).toEqual(whole.content);
        expect(streamed.stop_reason).toBe("max_tokens");
        expect(streamed.usage.output_tokens).toBe(8);
        expect(streamed.usage.input_tokens).toBe(whole.usage.input_tokens);

        // Bearer (Claude Code's ANTHROPIC_AUTH_TOKEN) is the same key
        const bearer = new Anthropic({ baseURL: url, apiKey: null, authToken: API_KEY, maxRetries: 0 });
        expect((await bearer.messages.create(request)).content).toEqual(whole.content);
    }, 300_000);

    it("makes a required tool call as a tool_use block, whole and streamed, and answers its tool_result", async () => {
        const request = {
            model: "tiny",
            messages,
            tools: [weather],
            tool_choice: { type: "tool" as const, name: "get_weather" },
            max_tokens: 200,
            ...greedy
        };
        const called = await client.messages.create(request);
        expect(called.stop_reason).toBe("tool_use");
        expect(called.content).toHaveLength(1);
        const use = called.content[0] as Anthropic.ToolUseBlock;
        expect(use.type).toBe("tool_use");
        expect(use.id).toMatch(/^toolu_/);
        expect(use.name).toBe("get_weather");
        expect(isWeatherInput(use.input), JSON.stringify(use.input)).toBe(true);

        const streamed = await client.messages.stream(request).finalMessage();
        expect(streamed.stop_reason).toBe("tool_use");
        expect((streamed.content[0] as Anthropic.ToolUseBlock).input).toEqual(use.input);

        const history = (result: string): Anthropic.MessageParam[] => [
            ...messages,
            { role: "assistant", content: called.content },
            { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: result }] }
        ];
        const sunny = await client.messages.create({
            model: "tiny",
            messages: history("Sunny"),
            tools: [weather],
            max_tokens: 4,
            ...greedy
        });
        const rainy = await client.messages.create({
            model: "tiny",
            messages: history("Rain all week, 9 C and windy, with storms"),
            tools: [weather],
            max_tokens: 4,
            ...greedy
        });
        expect(sunny.stop_reason).toBe("max_tokens");
        expect(sunny.content[0]!.type).toBe("text");
        // the result is in the prompt the model answers
        expect(rainy.usage.input_tokens).toBeGreaterThan(sunny.usage.input_tokens);
        // a history with its call and result is counted as a turn's prompt has it
        const bare = await client.messages.create({ model: "tiny", messages: history("Sunny"), max_tokens: 1, ...greedy });
        expect((await client.messages.countTokens({ model: "tiny", messages: history("Sunny") })).input_tokens).toBe(
            bare.usage.input_tokens
        );
    }, 300_000);

    it("counts a conversation's tokens as a turn's prompt has them", async () => {
        const request = { model: "tiny", system: "Be brief.", messages };
        const counted = await client.messages.countTokens(request);
        const answered = await client.messages.create({ ...request, max_tokens: 1, ...greedy });
        expect(counted.input_tokens).toBe(answered.usage.input_tokens + (answered.usage.cache_read_input_tokens ?? 0));
        const longer = await client.messages.countTokens({
            ...request,
            messages: [{ role: "user", content: "Weather in Oslo, Lima and Paris?" }]
        });
        expect(longer.input_tokens).toBeGreaterThan(counted.input_tokens);
    }, 300_000);

    it("keeps a metadata.user_id workspace's prompt between turns, in the key's own namespace", async () => {
        const turn = (key: string) =>
            new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 }).messages.create({
                model: "tiny",
                messages: [{ role: "user", content: "Remember the pages of this workspace, please." }],
                metadata: { user_id: "agent-1" },
                max_tokens: 2,
                ...greedy
            });
        const first = await turn(API_KEY);
        expect(first.usage.cache_read_input_tokens).toBe(0);
        const again = await turn(API_KEY);
        expect(again.usage.cache_read_input_tokens).toBeGreaterThan(0);
        // the same name under another key is another workspace: none of the first's KV
        const alice = await turn(ALICE_KEY);
        expect(alice.usage.cache_read_input_tokens).toBe(0);
    }, 300_000);

    it("refuses an unknown field by name, a bad key and a prompt past the window, each in Anthropic's error shape", async () => {
        const unknown = await refusal(
            client.messages.create({ model: "tiny", messages, max_tokens: 4, container: "c1" } as Anthropic.MessageCreateParamsNonStreaming)
        );
        expect(unknown).toMatchObject({ status: 400, type: "invalid_request_error" });
        expect(unknown.message).toContain("container is not served by Kvault");

        const missing = await refusal(
            client.messages.create({ model: "tiny", messages } as unknown as Anthropic.MessageCreateParamsNonStreaming)
        );
        expect(missing).toMatchObject({ status: 400, type: "invalid_request_error" });
        expect(missing.message).toContain("max_tokens is required");

        const image = await refusal(
            client.messages.create({
                model: "tiny",
                messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "http://127.0.0.1/x.png" } }] }],
                max_tokens: 4
            })
        );
        expect(image.message).toContain('messages[0].content[0].type "image" is not served by Kvault');

        const badKey = await refusal(
            new Anthropic({ baseURL: url, apiKey: "wrong-key-0123456789", maxRetries: 0 }).messages.create({
                model: "tiny",
                messages,
                max_tokens: 4
            })
        );
        expect(badKey).toMatchObject({ status: 401, type: "authentication_error" });
        expect(badKey.message).toContain("Incorrect API key");

        const otherModel = await refusal(client.messages.create({ model: "claude-sonnet-4-5", messages, max_tokens: 4 }));
        expect(otherModel).toMatchObject({ status: 404, type: "not_found_error" });
        expect(otherModel.message).toContain('This server runs "tiny"');

        const tooLong = await refusal(
            client.messages.create({ model: "tiny", messages: [{ role: "user", content: "pages ".repeat(3000) }], max_tokens: 4 })
        );
        expect(tooLong).toMatchObject({ status: 400, type: "invalid_request_error" });
        expect(tooLong.message).toMatch(/1,024/);
    }, 300_000);
});

describe("a full server's refusal in Anthropic's shape", () => {
    let api: InProcessApiServer | undefined;
    let client: Anthropic;

    beforeAll(async () => {
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            // paced answers, so that the one place is still taken when the second request comes
            engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false, tokenDelayMs: 20 },
            server: { idleTimeoutMs: 120_000, maxInFlight: 1 }
        });
        client = new Anthropic({ baseURL: api.url, apiKey: API_KEY, maxRetries: 0 });
    }, 120_000);
    afterAll(async () => {
        await api?.close();
    });

    it("answers 429 rate_limit_error with Kvault's numbers and Retry-After while the one place is taken", async () => {
        const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Hi" }];
        const running = client.messages.stream({ model: "tiny", messages, max_tokens: 200, ...greedy });
        await new Promise((resolve, reject) => {
            running.once("text", resolve);
            running.once("error", reject);
        });
        const error = await client.messages.create({ model: "tiny", messages, max_tokens: 4 }).then(
            () => undefined,
            (failure: unknown) => failure as APIError
        );
        expect(error?.status).toBe(429);
        expect(error?.headers?.get("retry-after")).toBe("1");
        expect(error?.error).toEqual({
            type: "error",
            error: {
                type: "rate_limit_error",
                message: "1 requests are already running or queued, the most this server takes. Retry in a moment."
            }
        });
        running.abort();
        await running.done().catch(() => undefined);
    }, 300_000);
});
