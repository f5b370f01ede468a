// Checks of what the store reads back (chat files, the workspace list) and what the RPC hands it:
// anything may have written those bytes, so every field is checked and a bad one is named.
import type { StoredMessage, WorkspaceMeta, WorkspaceSettings } from "../../contract/workspaces.js";
import { isStoreId, workspaceLimits } from "../../contract/workspaces.js";

export type Read<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const finishes = new Set(["stop", "length", "stopped"]);

/** A message of a chat: id, role user|assistant, content within the limit, optional finish and usage. */
export function readStoredMessage(value: unknown): Read<StoredMessage> {
    if (!isRecord(value)) {
        return fail("the message is not an object");
    }
    if (!isStoreId(value.id)) {
        return fail(`id ${describe(value.id)} is not a store id (${workspaceLimits.idPattern.source})`);
    }
    if (value.role !== "user" && value.role !== "assistant") {
        return fail(`role ${describe(value.role)} is not "user" or "assistant"`);
    }
    if (typeof value.content !== "string") {
        return fail(`content is ${describe(value.content)}, not a string`);
    }
    if (value.content.length > workspaceLimits.maxMessageChars) {
        return fail(
            `content has ${value.content.length.toLocaleString("en-US")} characters; the limit is ${workspaceLimits.maxMessageChars.toLocaleString("en-US")}`
        );
    }
    if (value.finish !== undefined && (typeof value.finish !== "string" || !finishes.has(value.finish))) {
        return fail(`finish ${describe(value.finish)} is not "stop", "length" or "stopped"`);
    }
    let usage: StoredMessage["usage"];
    if (value.usage !== undefined) {
        const read = readUsage(value.usage);
        if (!read.ok) {
            return read;
        }
        usage = read.value;
    }
    return {
        ok: true,
        value: {
            id: value.id,
            role: value.role,
            content: value.content,
            ...(value.finish !== undefined ? { finish: value.finish as StoredMessage["finish"] } : {}),
            ...(usage !== undefined ? { usage } : {})
        }
    };
}

/** A workspace's entry in the workspace list: id, name, colour and settings, all within limits. */
export function readWorkspaceMeta(value: unknown): Read<WorkspaceMeta> {
    if (!isRecord(value)) {
        return fail("the workspace is not an object");
    }
    if (!isStoreId(value.id)) {
        return fail(`id ${describe(value.id)} is not a store id (${workspaceLimits.idPattern.source})`);
    }
    if (typeof value.name !== "string" || value.name.trim() === "" || value.name.length > workspaceLimits.maxNameChars) {
        return fail(`name ${describe(value.name)} is not a name of 1 to ${workspaceLimits.maxNameChars} characters`);
    }
    if (typeof value.colour !== "number" || !Number.isSafeInteger(value.colour) || value.colour < 0 || value.colour > 1_000) {
        return fail(`colour ${describe(value.colour)} is not a whole number from 0 to 1,000`);
    }
    const settings = readWorkspaceSettings(value.settings);
    if (!settings.ok) {
        return settings;
    }
    return { ok: true, value: { id: value.id, name: value.name, colour: value.colour, settings: settings.value } };
}

export function readWorkspaceSettings(value: unknown): Read<WorkspaceSettings> {
    if (!isRecord(value)) {
        return fail("settings is not an object");
    }
    const { systemPrompt, temperature, maxTokens } = value;
    if (typeof systemPrompt !== "string" || systemPrompt.length > workspaceLimits.maxSystemPromptChars) {
        return fail(
            `settings.systemPrompt is not a string of at most ${workspaceLimits.maxSystemPromptChars.toLocaleString("en-US")} characters`
        );
    }
    if (
        typeof temperature !== "number" ||
        !(temperature >= workspaceLimits.minTemperature && temperature <= workspaceLimits.maxTemperature)
    ) {
        return fail(
            `settings.temperature ${describe(temperature)} is not a number from ${workspaceLimits.minTemperature} to ${workspaceLimits.maxTemperature}`
        );
    }
    if (
        typeof maxTokens !== "number" ||
        !Number.isSafeInteger(maxTokens) ||
        maxTokens < workspaceLimits.minMaxTokens ||
        maxTokens > workspaceLimits.maxMaxTokens
    ) {
        return fail(
            `settings.maxTokens ${describe(maxTokens)} is not a whole number from ${workspaceLimits.minMaxTokens} to ${workspaceLimits.maxMaxTokens.toLocaleString("en-US")}`
        );
    }
    return { ok: true, value: { systemPrompt, temperature, maxTokens } };
}

function readUsage(value: unknown): Read<NonNullable<StoredMessage["usage"]>> {
    if (!isRecord(value)) {
        return fail("usage is not an object");
    }
    const { promptTokens, cachedPromptTokens, evaluatedPromptTokens, completionTokens } = value;
    for (const [name, count] of Object.entries({ promptTokens, cachedPromptTokens, evaluatedPromptTokens, completionTokens })) {
        if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 0) {
            return fail(`usage.${name} ${describe(count)} is not a count`);
        }
    }
    return {
        ok: true,
        value: {
            promptTokens: promptTokens as number,
            cachedPromptTokens: cachedPromptTokens as number,
            evaluatedPromptTokens: evaluatedPromptTokens as number,
            completionTokens: completionTokens as number
        }
    };
}

/** A JSON text that must hold an object: the object, or "not JSON" / "not a JSON object". */
export function parseJsonObject(text: string): Read<Record<string, unknown>> {
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch {
        return fail("not JSON");
    }
    return isRecord(value) ? { ok: true, value } : fail("not a JSON object");
}

export function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fail(reason: string): { ok: false; reason: string } {
    return { ok: false, reason };
}

/** A short, bounded description: never echoes a huge value back. */
export function describe(value: unknown): string {
    if (value === undefined) {
        return "missing";
    }
    if (value === null) {
        return "null";
    }
    if (Array.isArray(value)) {
        return `a list of ${value.length.toLocaleString("en-US")}`;
    }
    if (typeof value === "string") {
        return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length.toLocaleString("en-US")} characters`;
    }
    if (typeof value === "number" || typeof value === "boolean") {
        return String(value);
    }
    return typeof value === "object" ? "an object" : typeof value;
}
