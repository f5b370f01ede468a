// What the workspace store keeps (contract/workspaces.ts), as schemas: the RPC checks saveWorkspace's
// and appendMessage's params with them, and the store checks what it reads back from its files with
// the same ones (host/store/readStoredValues.ts), so the two can never accept different things.
// Their messages are the reasons a damaged record is set aside for ("role \"system\" is not …"),
// without a final period: callers put them into sentences of their own.
import * as v from "valibot";
import { backendNamePattern, maxBackendModelChars } from "../backends.js";
import { mcpLimits } from "../mcp.js";
import { isMcpToolCallOutcome, isMcpServerList } from "../mcpRecords.js";
import type { StoredMessage, WorkspaceMeta } from "../workspaces.js";
import { isStoreId, workspaceLimits } from "../workspaces.js";
import { describeValue, isRecord, readWith, type Read } from "./fieldSchemas.js";

/** A short, bounded description: never echoes a huge value back. A missing field is "missing". */
export function describeStored(value: unknown): string {
    return value === undefined ? "missing" : describeValue(value);
}

/** A refusal's reason is one sentence with a few numbers; a longer one is no note of Kvault's. */
const DISK_KV_NOTE_MAX_CHARS = 1_000;

const said = (issue: v.BaseIssue<unknown>): string => describeStored(issue.input);

/** An object rebuilt from `entries` only; `notObject` is the reason when it is not one. */
function storeRecord<E extends Record<string, v.GenericSchema>>(entries: E, notObject: string) {
    return v.pipe(
        v.custom<Record<string, unknown>>(isRecord, notObject),
        v.transform((input) => {
            const picked: Record<string, unknown> = {};
            for (const [key, schema] of Object.entries(entries)) {
                if (Object.hasOwn(input, key) || schema.type !== "optional") {
                    picked[key] = input[key];
                }
            }
            return picked;
        }),
        v.object(entries)
    );
}

const storeIdField = v.custom<string>(isStoreId, (issue) => `${said(issue)} is not a store id (${workspaceLimits.idPattern.source})`);

const count = v.custom<number>(
    (value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0,
    (issue) => `${said(issue)} is not a count`
);

const finishes = new Set(["stop", "length", "stopped"]);

const parentField = v.optional(
    v.custom<string | null>(
        (value) => value === null || isStoreId(value),
        (issue) => `${said(issue)} is neither null (the first message) nor a message id`
    )
);

/** A number from `min` to `max`, said as such when it is not one. */
const between = (min: number, max: number, whole: boolean) =>
    v.custom<number>(
        (value) =>
            typeof value === "number" && Number.isFinite(value) && value >= min && value <= max && (!whole || Number.isSafeInteger(value)),
        (issue) => `${said(issue)} is not a ${whole ? "whole number" : "number"} from ${min} to ${max.toLocaleString("en-US")}`
    );

/** The longest model name a stored answer keeps (a GGUF's general.name, or its file's name, is far shorter). */
export const MODEL_NAME_MAX_CHARS = 512;

/** A message of a chat: id, role user|assistant, content within the limit, optional finish and usage. */
export const storedMessageSchema = storeRecord(
    {
        id: storeIdField,
        role: v.custom<StoredMessage["role"]>(
            (value) => value === "user" || value === "assistant",
            (issue) => `${said(issue)} is not "user" or "assistant"`
        ),
        content: v.pipe(
            v.string((issue) => `is ${said(issue)}, not a string`),
            v.check(
                (content) => content.length <= workspaceLimits.maxMessageChars,
                (issue) =>
                    `has ${(issue.input as string).length.toLocaleString("en-US")} characters; the limit is ${workspaceLimits.maxMessageChars.toLocaleString("en-US")}`
            )
        ),
        finish: v.optional(
            v.custom<NonNullable<StoredMessage["finish"]>>(
                (value) => typeof value === "string" && finishes.has(value),
                (issue) => `${said(issue)} is not "stop", "length" or "stopped"`
            )
        ),
        usage: v.optional(
            storeRecord(
                {
                    promptTokens: count,
                    cachedPromptTokens: count,
                    evaluatedPromptTokens: count,
                    completionTokens: count,
                    acceptedDraftTokens: v.optional(count),
                    rejectedDraftTokens: v.optional(count),
                    restoredFromDiskTokens: v.optional(count),
                    diskKvRefused: v.optional(
                        v.custom<string>(
                            (value) => typeof value === "string" && value.length <= DISK_KV_NOTE_MAX_CHARS,
                            "is not a short text"
                        )
                    )
                },
                "is not an object"
            )
        ),
        parent: parentField,
        at: v.optional(count),
        timing: v.optional(storeRecord({ firstTokenMs: count, totalMs: count }, "is not an object")),
        toolCalls: v.optional(
            v.custom<NonNullable<StoredMessage["toolCalls"]>>(
                (value) => Array.isArray(value) && value.length <= mcpLimits.maxToolRounds && value.every(isMcpToolCallOutcome),
                `is not a list of at most ${mcpLimits.maxToolRounds} tool calls (callId, server, tool, arguments, result or error)`
            )
        ),
        model: v.optional(
            v.custom<string>(
                (value) => typeof value === "string" && value.length > 0 && value.length <= MODEL_NAME_MAX_CHARS,
                `is not a model's name of 1 to ${MODEL_NAME_MAX_CHARS} characters`
            )
        )
    },
    "the message is not an object"
);

/** A workspace's settings (a preset's too: contract/rpc/presetSchemas.ts). */
export const settingsSchema = storeRecord(
    {
        systemPrompt: v.custom<string>(
            (value) => typeof value === "string" && value.length <= workspaceLimits.maxSystemPromptChars,
            `is not a string of at most ${workspaceLimits.maxSystemPromptChars.toLocaleString("en-US")} characters`
        ),
        temperature: v.custom<number>(
            (value) => typeof value === "number" && value >= workspaceLimits.minTemperature && value <= workspaceLimits.maxTemperature,
            (issue) => `${said(issue)} is not a number from ${workspaceLimits.minTemperature} to ${workspaceLimits.maxTemperature}`
        ),
        maxTokens: v.custom<number>(
            (value) =>
                typeof value === "number" &&
                Number.isSafeInteger(value) &&
                value >= workspaceLimits.minMaxTokens &&
                value <= workspaceLimits.maxMaxTokens,
            (issue) =>
                `${said(issue)} is not a whole number from ${workspaceLimits.minMaxTokens} to ${workspaceLimits.maxMaxTokens.toLocaleString("en-US")}`
        ),
        topP: v.optional(between(0, 1, false)),
        topK: v.optional(between(0, workspaceLimits.maxTopK, true)),
        minP: v.optional(between(0, 1, false)),
        repeatPenalty: v.optional(between(0, workspaceLimits.maxRepeatPenalty, false)),
        seed: v.optional(between(0, workspaceLimits.maxSeed, true)),
        keepKvOnDisk: v.optional(
            v.custom<boolean>(
                (value) => typeof value === "boolean",
                (issue) => `${said(issue)} is not true or false`
            )
        ),
        stop: v.optional(
            v.custom<readonly string[]>(
                (value) =>
                    Array.isArray(value) &&
                    value.length <= workspaceLimits.maxStopStrings &&
                    value.every((item) => typeof item === "string" && item.length <= workspaceLimits.maxStopChars),
                `is not a list of at most ${workspaceLimits.maxStopStrings} strings of at most ${workspaceLimits.maxStopChars} characters`
            )
        ),
        mcpServers: v.optional(
            v.custom<readonly string[]>(
                isMcpServerList,
                `is not a list of at most ${mcpLimits.maxWorkspaceServers} MCP server names (1 to ${mcpLimits.maxNameChars} letters, digits, '_' or '-')`
            )
        ),
        toolChoice: v.optional(
            v.custom<"auto" | "required">(
                (value) => value === "auto" || value === "required",
                (issue) => `${said(issue)} is not "auto" or "required"`
            )
        )
    },
    "is not an object"
);

/** A workspace's entry in the workspace list: id, name, colour and settings, all within limits. */
export const workspaceMetaSchema = storeRecord(
    {
        id: storeIdField,
        name: v.custom<string>(
            (value) => typeof value === "string" && value.trim() !== "" && value.length <= workspaceLimits.maxNameChars,
            (issue) => `${said(issue)} is not a name of 1 to ${workspaceLimits.maxNameChars} characters`
        ),
        colour: v.custom<number>(
            (value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= 1_000,
            (issue) => `${said(issue)} is not a whole number from 0 to 1,000`
        ),
        settings: settingsSchema,
        backend: v.optional(
            storeRecord(
                {
                    name: v.custom<string>(
                        (value) => typeof value === "string" && backendNamePattern.test(value),
                        (issue) => `${said(issue)} is not a backend name (${backendNamePattern.source})`
                    ),
                    model: v.custom<string>(
                        (value) => typeof value === "string" && value !== "" && value.length <= maxBackendModelChars,
                        (issue) => `${said(issue)} is not a model id of 1 to ${maxBackendModelChars} characters`
                    )
                },
                "is not an object with the backend's name and model"
            )
        ),
        localModel: v.optional(
            v.custom<string>(
                (value) => typeof value === "string" && value !== "" && value.length <= maxBackendModelChars,
                (issue) => `${said(issue)} is not a model name of 1 to ${maxBackendModelChars} characters`
            )
        )
    },
    "the workspace is not an object"
);

export function readStoredMessage(value: unknown): Read<StoredMessage> {
    return readWith(storedMessageSchema, value);
}

export function readWorkspaceMeta(value: unknown): Read<WorkspaceMeta> {
    return readWith(workspaceMetaSchema, value);
}

/**
 * A store record as an RPC field: refused as "<field> is not one the store can keep: <reason>.",
 * the reason being the one a damaged file's record would be set aside for.
 */
export function storeRecordField<T>(read: (value: unknown) => Read<T>) {
    return v.pipe(
        v.unknown(),
        v.rawTransform<unknown, T>(({ dataset, addIssue, NEVER }) => {
            const result = read(dataset.value);
            if (!result.ok) {
                addIssue({ message: `is not one the store can keep: ${result.reason}.` });
                return NEVER;
            }
            return result.value;
        })
    );
}

/** A workspace's or a message's id as an RPC field (it names a file, so nothing else may reach the disk). */
export const storeIdParam = v.custom<string>(
    isStoreId,
    (issue) =>
        `${said(issue)} is not a workspace or message id: 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter or digit.`
);
