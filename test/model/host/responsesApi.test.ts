import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "test-key-0123456789";

const weather: OpenAI.Responses.FunctionTool = {
    type: "function",
    name: "get_weather",
    description: "The weather in a city.",
    strict: false,
    parameters: {
        type: "object",
        properties: { city: { enum: ["Oslo", "Lima"] }, days: { enum: [1, 2, 3] } },
        required: ["city", "days"],
        additionalProperties: false
    }
};

function isWeatherArguments(text: string): boolean {
    const value = JSON.parse(text) as Record<string, unknown>;
    return (
        Object.keys(value).sort().join(",") === "city,days" &&
        ["Oslo", "Lima"].includes(value.city as string) &&
        [1, 2, 3].includes(value.days as number)
    );
}

/** The 400 a call was refused with: its message. */
async function refusal(call: Promise<unknown>): Promise<APIError> {
    const error = await call.then(
        () => undefined,
        (failure: unknown) => failure
    );
    expect(error).toBeInstanceOf(APIError);
    return error as APIError;
}

describe("OpenAI's Responses API, driven by the official openai client's responses", () => {
    let api: InProcessApiServer | undefined;
    let client: OpenAI;

    beforeAll(async () => {
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            // the clients keep connections alive between requests: on a loaded machine one reused as the
            // server's idle timeout closes it would be reset, so none closes while a test runs
            server: { idleTimeoutMs: 120_000 }
        });
        client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
    }, 120_000);
    afterAll(async () => {
        await api?.close();
    });

    it("answers input whole and streamed in the Responses API's events, the same text", async () => {
        const request = { model: "tiny", instructions: "Be brief.", input: "Weather in Oslo?", max_output_tokens: 8, temperature: 0 };
        const whole = await client.responses.create(request);
        expect(whole.object).toBe("response");
        expect(whole.id).toMatch(/^resp_/);
        expect(whole.status).toBe("incomplete");
        expect(whole.incomplete_details).toEqual({ reason: "max_output_tokens" });
        expect(whole.output).toHaveLength(1);
        expect(whole.output[0]!.type).toBe("message");
        expect(whole.output_text.length).toBeGreaterThan(0);
        expect(whole.usage!.output_tokens).toBe(8);
        expect(whole.usage!.input_tokens).toBeGreaterThan(0);

        const stream = await client.responses.create({ ...request, stream: true });
        const events: OpenAI.Responses.ResponseStreamEvent[] = [];
        for await (const event of stream) {
            events.push(event);
        }
        expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
        const types = events.map((event) => event.type);
        expect(types.slice(0, 4)).toEqual([
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added"
        ]);
        expect(types.slice(4, -4).length).toBeGreaterThan(0);
        expect(types.slice(4, -4).every((type) => type === "response.output_text.delta")).toBe(true);
        expect(types.slice(-4)).toEqual([
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.incomplete"
        ]);
        const deltas = events.flatMap((event) => (event.type === "response.output_text.delta" ? [event.delta] : []));
        expect(deltas.join("")).toBe(whole.output_text);
        const last = events.at(-1) as OpenAI.Responses.ResponseIncompleteEvent;
        expect(last.response.usage!.output_tokens).toBe(8);
    }, 300_000);

    it("makes a required function call, streamed as its events, and answers its output, continued by previous_response_id or sent whole", async () => {
        const input = "Weather in Oslo?";
        const request = {
            model: "tiny",
            input,
            tools: [weather],
            tool_choice: { type: "function" as const, name: "get_weather" },
            max_output_tokens: 200,
            temperature: 0
        };
        const called = await client.responses.create(request);
        expect(called.status).toBe("completed");
        expect(called.output).toHaveLength(1);
        const call = called.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
        expect(call.type).toBe("function_call");
        expect(call.name).toBe("get_weather");
        expect(call.call_id).toMatch(/^call_/);
        expect(isWeatherArguments(call.arguments), call.arguments).toBe(true);

        const stream = client.responses.stream(request);
        const types: string[] = [];
        stream.on("event", (event) => void types.push(event.type));
        const streamed = await stream.finalResponse();
        expect(types).toEqual([
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed"
        ]);
        expect((streamed.output[0] as OpenAI.Responses.ResponseFunctionToolCall).arguments).toBe(call.arguments);

        const output: OpenAI.Responses.ResponseInputItem = { type: "function_call_output", call_id: call.call_id, output: "Sunny, 21 C" };
        const continued = await client.responses.create({
            model: "tiny",
            previous_response_id: called.id,
            input: [output],
            tools: [weather],
            max_output_tokens: 4,
            temperature: 0
        });
        expect(continued.previous_response_id).toBe(called.id);
        expect(continued.output[0]!.type).toBe("message");
        const whole = await client.responses.create({
            model: "tiny",
            input: [
                { role: "user", content: input },
                { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
                output
            ],
            tools: [weather],
            max_output_tokens: 4,
            temperature: 0
        });
        // the stored conversation is the one sent whole: the same prompt, the same answer
        expect(continued.usage!.input_tokens).toBe(whole.usage!.input_tokens);
        expect(continued.output_text).toBe(whole.output_text);
    }, 300_000);

    it("continues a response by previous_response_id in its workspace only, and never one sent with store: false", async () => {
        const first = await client.responses.create({
            model: "tiny",
            input: "My name is Page.",
            user: "agent-1",
            max_output_tokens: 2,
            temperature: 0
        });
        const second = await client.responses.create({
            model: "tiny",
            previous_response_id: first.id,
            input: "What is my name?",
            user: "agent-1",
            max_output_tokens: 2,
            temperature: 0
        });
        // the first turn's prompt and answer are in the second's, held by the workspace
        expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens + 2);
        expect(second.usage!.input_tokens_details.cached_tokens).toBeGreaterThan(0);

        const elsewhere = await refusal(
            client.responses.create({
                model: "tiny",
                previous_response_id: first.id,
                input: "What is my name?",
                user: "agent-2",
                max_output_tokens: 2
            })
        );
        expect(elsewhere.status).toBe(400);
        expect(elsewhere.message).toContain(`previous_response_id "${first.id}" is not a response stored in this workspace`);

        const unstored = await client.responses.create({
            model: "tiny",
            input: "Hello.",
            store: false,
            max_output_tokens: 2,
            temperature: 0
        });
        expect((unstored as unknown as { store: boolean }).store).toBe(false);
        const notKept = await refusal(
            client.responses.create({ model: "tiny", previous_response_id: unstored.id, input: "Again.", max_output_tokens: 2 })
        );
        expect(notKept.status).toBe(400);
        expect(notKept.message).toContain("none sent with store: false");
    }, 300_000);

    it("refuses a field it does not serve by name", async () => {
        const reasoning = await refusal(client.responses.create({ model: "tiny", input: "Hi", reasoning: { effort: "low" } }));
        expect(reasoning.status).toBe(400);
        expect(reasoning.message).toContain("reasoning is not served by Kvault");
        expect((reasoning.error as { param?: string }).param).toBe("reasoning");

        const image = await refusal(
            client.responses.create({
                model: "tiny",
                input: [{ role: "user", content: [{ type: "input_image", image_url: "http://127.0.0.1/x.png", detail: "auto" }] }]
            })
        );
        expect(image.status).toBe(400);
        expect(image.message).toContain("input[0].content[0] must be an input_text");
    }, 300_000);
});
