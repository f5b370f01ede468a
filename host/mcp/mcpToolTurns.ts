// A chat's turn in a workspace that offers MCP tools (its settings' mcpServers): the tools go to
// the model through the tool-call parsing the API has (readTools, toolCallAnswers.ts, the
// engine's toolCallGrammar), and each call the answer makes is shown to the user, run once they
// allow it, counted against the window (the meter's measure) and only then given back to the
// model, which answers again. A call that fails (denied, timed out, its server crashed or wrote
// garbage, its result too large) goes back to the model as that named error: the turn goes on.
// Streamed text is held back while it may still be a call, as the API holds it.
import type { ChatMessage, ChatTurnRequest, EngineClient, ToolCall, TurnResult } from "../../contract/engineProtocol.js";
import { mcpLimits, type McpToolCallOutcome, type McpToolCallRequest } from "../../contract/mcp.js";
import type { TurnListener } from "../../contract/turnEvents.js";
import { KvaultError } from "../../engine/index.js";
import type { FindWorkspace, TurnRunner } from "../backends/routeTurns.js";
import { readTools, type ToolUse } from "../http/readTools.js";
import { mayBeToolCall, readToolCallAnswer, templateCallGrammar, type ApiToolCall } from "../http/toolCallAnswers.js";
import type { McpManager, OfferedTool } from "./McpManager.js";
import type { McpPermissionPrompts } from "./McpPermissionPrompts.js";
import { relaxToolSchema } from "./relaxToolSchema.js";
import { McpResultTooLargeError, McpToolDeniedError, McpToolFailedError, McpToolUnknownError } from "./mcpErrors.js";

export interface McpTurnParts {
    readonly mcp: McpManager;
    readonly prompts: McpPermissionPrompts;
    /** The local engine: its tool-call syntax, and the meter's measure. */
    readonly engine: () => Promise<EngineClient>;
    readonly findWorkspace: FindWorkspace;
    readonly log: (line: string) => void;
}

/** `route` (routeTurns) with MCP tools added to the turns of local workspaces that offer some. */
export function withMcpTools(
    route: (request: ChatTurnRequest) => Promise<TurnRunner>,
    parts: McpTurnParts
): (request: ChatTurnRequest) => Promise<TurnRunner> {
    return async (request) => {
        const runner = await route(request);
        const meta = await parts.findWorkspace(request.workspace);
        const servers = meta?.settings.mcpServers ?? [];
        if (meta === undefined || meta.backend !== undefined || servers.length === 0 || request.tools !== undefined) {
            return runner;
        }
        const offered = usableTools(await parts.mcp.tools(servers), parts.log);
        if (offered.length === 0) {
            return runner;
        }
        const engine = await parts.engine();
        return {
            chat: (turn, listener, signal) =>
                runToolRounds(
                    { runner, engine, parts, offered, required: meta.settings.toolChoice === "required" },
                    turn,
                    listener ?? (() => undefined),
                    signal ?? new AbortController().signal
                )
        };
    };
}

interface ToolTurn {
    readonly runner: TurnRunner;
    readonly engine: EngineClient;
    readonly parts: McpTurnParts;
    readonly offered: readonly OfferedTool[];
    readonly required: boolean;
}

/** Up to mcpLimits.maxToolRounds rounds of one call each, then an answer whose calls are not run (its text is the answer). */
async function runToolRounds(turn: ToolTurn, request: ChatTurnRequest, listener: TurnListener, signal: AbortSignal): Promise<TurnResult> {
    const { requestId } = request;
    const syntax = turn.engine.info.toolCallSyntax;
    let messages: readonly ChatMessage[] = request.messages;
    const outcomes: McpToolCallOutcome[] = [];
    for (let round = 0; round <= mcpLimits.maxToolRounds; round++) {
        const last = round === mcpLimits.maxToolRounds;
        const use = toolUse(turn.offered, round === 0 && turn.required);
        const grammar = templateCallGrammar(use, syntax) ?? use.grammar;
        let held = "";
        let holding = !last;
        const result = await turn.runner.chat(
            {
                ...request,
                messages,
                tools: use.tools,
                sampling: grammar === undefined ? request.sampling : { ...request.sampling, grammar }
            },
            (event) => {
                if (event.type !== "text" || !holding) {
                    return listener(event);
                }
                held += event.text;
                if (!mayBeToolCall(held, use, syntax)) {
                    holding = false;
                    return listener({ type: "text", requestId, text: held });
                }
                return undefined;
            },
            signal
        );
        const calls = last ? undefined : readToolCallAnswer(result.text, use, result.finishReason, syntax);
        if (calls === undefined) {
            if (holding && held !== "") {
                await listener({ type: "text", requestId, text: held });
            }
            return outcomes.length === 0 ? result : { ...result, toolCalls: outcomes };
        }
        const answered: ToolCall[] = [];
        for (const call of calls) {
            const outcome = await runCall(turn, request.workspace, requestId, messages, call, listener, signal);
            outcomes.push(outcome);
            answered.push({
                id: call.id,
                name: call.function.name,
                arguments: call.function.arguments,
                result: outcome.result ?? `Error (${outcome.error!.code}): ${outcome.error!.message}`
            });
        }
        messages = [...messages, { role: "assistant", content: "", toolCalls: answered }];
    }
    throw new Error("unreachable: the last round's answer is never read as calls");
}

/** One call: asked, run, counted; its outcome, never a throw (a Stop while it runs ends the turn). */
async function runCall(
    turn: ToolTurn,
    workspace: string,
    requestId: string,
    messages: readonly ChatMessage[],
    call: ApiToolCall,
    listener: TurnListener,
    signal: AbortSignal
): Promise<McpToolCallOutcome> {
    const tool = turn.offered.find((item) => item.name === call.function.name);
    const shown: McpToolCallRequest = {
        callId: call.id,
        server: tool?.server ?? "",
        tool: tool?.tool ?? call.function.name,
        arguments: call.function.arguments
    };
    let outcome: McpToolCallOutcome;
    try {
        if (tool === undefined) {
            throw new McpToolUnknownError(`The model called "${call.function.name}", which this workspace does not offer.`);
        }
        const { mcp, prompts } = turn.parts;
        if (!mcp.allowed(workspace, tool.server, tool.tool)) {
            void listener({ type: "tool", requestId, tool: { kind: "call", call: shown } });
            const permission = await prompts.ask(requestId, call.id, signal);
            if (permission === "deny") {
                throw new McpToolDeniedError(`You did not allow "${tool.tool}" of "${tool.server}"; the model was told so.`);
            }
            mcp.remember(workspace, tool.server, tool.tool, permission);
        }
        const result = await mcp.call(tool.server, tool.tool, JSON.parse(call.function.arguments) as Record<string, unknown>, signal);
        const numTokens = await countResult(turn.engine, workspace, messages, call, result);
        outcome = { ...shown, result, numTokens };
    } catch (error) {
        signal.throwIfAborted();
        const named = error instanceof KvaultError ? error : new McpToolFailedError(`The tool call failed: ${(error as Error).message}`);
        outcome = { ...shown, error: { code: named.code, message: named.message } };
    }
    void listener({ type: "tool", requestId, tool: { kind: "outcome", outcome } });
    return outcome;
}

/** The result's tokens on the meter (the conversation with the call, then the result); refused whole when it does not fit. */
async function countResult(
    engine: EngineClient,
    workspace: string,
    messages: readonly ChatMessage[],
    call: ApiToolCall,
    result: string
): Promise<number> {
    const measured = await engine.call("measure", {
        workspace,
        messages: [
            ...messages.map(({ role, content }) => ({ role, content })),
            { role: "assistant" as const, content: `${call.function.name}(${call.function.arguments})` }
        ],
        draft: result
    });
    if (!measured.fits) {
        throw new McpResultTooLargeError(
            `The tool's result is ${measured.draftTokens.toLocaleString("en-US")} tokens; the chat uses ${measured.usedTokens.toLocaleString("en-US")} of its ${measured.limit.toLocaleString("en-US")}-token window, so it does not fit (${(-measured.remainingTokens).toLocaleString("en-US")} over). It was refused whole, not cut: ask for less, or start a new chat.`
        );
    }
    return measured.draftTokens;
}

/** The tools as the API's reader takes them: one call at a time, required in the first round when the workspace says so. */
function toolUse(offered: readonly OfferedTool[], required: boolean): ToolUse {
    const use = readTools({
        tools: offered.map(toApiTool),
        tool_choice: required ? "required" : "auto",
        parallel_tool_calls: false
    });
    return use!;
}

/**
 * The offered tools with their schemas relaxed to what a grammar enforces (relaxToolSchema.ts), each
 * relaxation said in the log; a tool whose schema cannot be read at all is left out, said there too.
 */
function usableTools(offered: readonly OfferedTool[], log: (line: string) => void): OfferedTool[] {
    return offered.flatMap((tool) => {
        const relaxed = relaxToolSchema(tool.inputSchema);
        if (!relaxed.ok) {
            log(`MCP tool "${tool.tool}" of "${tool.server}" is not offered: its arguments' schema ${relaxed.reason}.`);
            return [];
        }
        if (relaxed.dropped.length > 0) {
            log(
                `MCP tool "${tool.tool}" of "${tool.server}": the server checks ${relaxed.dropped.join(", ")} of its arguments (a grammar cannot).`
            );
        }
        const usable = { ...tool, inputSchema: relaxed.schema };
        try {
            readTools({ tools: [toApiTool(usable)] });
            return [usable];
        } catch (error) {
            log(`MCP tool "${tool.tool}" of "${tool.server}" is not offered: ${(error as Error).message}`);
            return [];
        }
    });
}

function toApiTool(tool: OfferedTool): Record<string, unknown> {
    return {
        type: "function",
        function: {
            name: tool.name,
            ...(tool.description === undefined ? {} : { description: tool.description }),
            parameters: tool.inputSchema
        }
    };
}
