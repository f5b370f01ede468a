// One API turn that may answer with calls of the request's tools, for the API families beside chat
// completions (Anthropic's Messages, OpenAI's Responses): the required call's grammar in the
// template's own syntax, streamed text held back while it may still be a call, and the answer read
// as calls (toolCallAnswers.ts) or as the text it is. Each family only says how it writes text.
import type { ServerResponse } from "node:http";
import type { TurnResult } from "../../contract/engineProtocol.js";
import { runApiTurn, type ApiContext, type ApiTurn } from "./ApiContext.js";
import type { ToolUse } from "./readTools.js";
import { mayBeToolCall, readToolCallAnswer, templateCallGrammar, type ApiToolCall } from "./toolCallAnswers.js";

export interface ToolTurnAnswer {
    readonly result: TurnResult;
    /** The answer's calls; undefined when it is text (then every piece of it has gone to `writeText`). */
    readonly calls: readonly ApiToolCall[] | undefined;
}

/**
 * Runs `turn` with `tools` (undefined: none offered, or `tool_choice` none). `writeText`, when given,
 * writes the answer's text as it streams, except what turns out to be a call; without it the answer
 * is read whole.
 */
export async function runToolTurn(
    context: ApiContext,
    response: ServerResponse,
    turn: Omit<ApiTurn, "tools">,
    tools: ToolUse | undefined,
    writeText?: (text: string) => void
): Promise<ToolTurnAnswer> {
    const syntax = context.engine.info.toolCallSyntax;
    const callGrammar = tools === undefined ? undefined : templateCallGrammar(tools, syntax);
    let held = "";
    let holding = tools !== undefined;
    const result = await runApiTurn(
        context,
        response,
        {
            ...turn,
            sampling: callGrammar === undefined ? turn.sampling : { ...turn.sampling, grammar: callGrammar },
            ...(tools === undefined ? {} : { tools: tools.tools })
        },
        writeText === undefined
            ? undefined
            : (event) => {
                  if (event.type !== "text") {
                      return;
                  }
                  if (!holding) {
                      return writeText(event.text);
                  }
                  held += event.text;
                  if (!mayBeToolCall(held, tools!, syntax)) {
                      holding = false;
                      writeText(held);
                  }
              }
    );
    const calls = tools === undefined ? undefined : readToolCallAnswer(result.text, tools, result.finishReason, syntax);
    if (calls === undefined && holding && held !== "") {
        writeText?.(held);
    }
    return { result, calls };
}
