// A conversation with tools, in node-llama-cpp's chat history: the tools as the template's
// available functions, an assistant's tool calls (with their results) as function calls in its
// response. The chat wrapper then renders them in the model's own tool format where its template
// has one, in node-llama-cpp's function-calling syntax otherwise.
import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelFunctions, GbnfJsonSchema } from "node-llama-cpp";
import type { ChatMessage, ToolCall, ToolDefinition } from "../../contract/engineProtocol.js";

/** The turn's tools as the wrapper's available functions; undefined for none (the template renders no tool section). */
export function availableFunctions(tools: readonly ToolDefinition[] | undefined): ChatModelFunctions | undefined {
    if (tools === undefined || tools.length === 0) {
        return undefined;
    }
    const functions: Record<string, ChatModelFunctions[string]> = {};
    for (const tool of tools) {
        functions[tool.name] = {
            ...(tool.description === undefined ? {} : { description: tool.description }),
            // validated in the host and again in the engine by the turn schema (contract/rpc/toolSchemas.ts): the parts a grammar enforces
            ...(tool.parameters === undefined ? {} : { params: tool.parameters as unknown as GbnfJsonSchema })
        };
    }
    return functions;
}

/**
 * The conversation's history, ending with the model's item the answer continues: a new, empty one
 * after the user's message, or the last assistant's own after its answered tool calls (the model
 * goes on from the results).
 */
export function toChatHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
    const chatHistory: ChatHistoryItem[] = messages.map((message) => {
        switch (message.role) {
            case "system":
                return { type: "system", text: message.content };
            case "user":
                return { type: "user", text: message.content };
            case "assistant":
                return message.toolCalls === undefined
                    ? { type: "model", response: [message.content] }
                    : {
                          type: "model",
                          response: [...(message.content === "" ? [] : [message.content]), ...message.toolCalls.map(toFunctionCall)]
                      };
        }
    });
    const last = messages.at(-1);
    if (last?.role !== "assistant" || last.toolCalls === undefined) {
        chatHistory.push({ type: "model", response: [] });
    }
    return chatHistory;
}

function toFunctionCall(call: ToolCall, index: number): ChatModelFunctionCall {
    return {
        type: "functionCall",
        name: call.name,
        params: parseJson(call.arguments),
        result: parseJson(call.result ?? ""),
        startsNewChunk: index === 0
    };
}

/** JSON text as its value (what a template renders as JSON), or the text itself when it is not JSON. */
function parseJson(text: string): unknown {
    try {
        return JSON.parse(text);
    } catch {
        return text;
    }
}
