import { defaultWorkspaceSettings, workspaceLimits } from "../workspaces/workspaceDefaults";
import type { StoredMessage, Workspace, WorkspaceSettings } from "../workspaces/Workspace";

/**
 * Workspaces read back from storage, which anything may have written: every field is checked,
 * a bad setting falls back to its default, a bad message or workspace is dropped.
 */
export function readPersistedWorkspaces(value: unknown): Workspace[] {
    if (!Array.isArray(value))
        return [];
    const seen = new Set<string>();
    const workspaces: Workspace[] = [];
    for (const item of value) {
        const workspace = readWorkspace(item);
        if (workspace !== undefined && !seen.has(workspace.id)) {
            seen.add(workspace.id);
            workspaces.push(workspace);
        }
    }
    return workspaces;
}

function readWorkspace(value: unknown): Workspace | undefined {
    if (!isRecord(value) || typeof value.id !== "string" || value.id === "" || typeof value.name !== "string")
        return undefined;
    const messages = Array.isArray(value.messages) ? value.messages.flatMap((item: unknown) => readMessage(item) ?? []) : [];
    return {
        id: value.id,
        name: value.name.slice(0, workspaceLimits.maxNameChars),
        colour: typeof value.colour === "number" && Number.isSafeInteger(value.colour) && value.colour >= 0 ? value.colour : 0,
        settings: readSettings(value.settings),
        messages
    };
}

function readSettings(value: unknown): WorkspaceSettings {
    const settings = isRecord(value) ? value : {};
    const temperature = settings.temperature;
    const maxTokens = settings.maxTokens;
    return {
        systemPrompt: typeof settings.systemPrompt === "string" ? settings.systemPrompt : defaultWorkspaceSettings.systemPrompt,
        temperature: typeof temperature === "number" && temperature >= workspaceLimits.minTemperature && temperature <= workspaceLimits.maxTemperature
            ? temperature : defaultWorkspaceSettings.temperature,
        maxTokens: typeof maxTokens === "number" && Number.isSafeInteger(maxTokens) && maxTokens >= workspaceLimits.minMaxTokens && maxTokens <= workspaceLimits.maxMaxTokens
            ? maxTokens : defaultWorkspaceSettings.maxTokens
    };
}

function readMessage(value: unknown): StoredMessage | undefined {
    if (!isRecord(value) || typeof value.id !== "string" || (value.role !== "user" && value.role !== "assistant") || typeof value.content !== "string")
        return undefined;
    const finish = value.finish === "stop" || value.finish === "length" || value.finish === "stopped" ? value.finish : undefined;
    const usage = readUsage(value.usage);
    return { id: value.id, role: value.role, content: value.content, ...(finish !== undefined ? { finish } : {}), ...(usage !== undefined ? { usage } : {}) };
}

function readUsage(value: unknown): StoredMessage["usage"] {
    if (!isRecord(value))
        return undefined;
    const { promptTokens, cachedPromptTokens, evaluatedPromptTokens, completionTokens } = value;
    const counts = [promptTokens, cachedPromptTokens, evaluatedPromptTokens, completionTokens];
    if (!counts.every((count) => typeof count === "number" && Number.isSafeInteger(count) && count >= 0))
        return undefined;
    return { promptTokens: promptTokens as number, cachedPromptTokens: cachedPromptTokens as number, evaluatedPromptTokens: evaluatedPromptTokens as number, completionTokens: completionTokens as number };
}

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
