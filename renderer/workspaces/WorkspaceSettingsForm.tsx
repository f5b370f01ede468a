import { useState } from "react";
import { useAppServices } from "../AppServices.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { workspaceLimits } from "./workspaceDefaults.js";
import type { Workspace } from "./Workspace.js";
import { paletteColour, workspacePalette } from "./workspacePalette.js";
import { Swatch } from "./Swatch.js";

/** Parses a number field; undefined when it is not a number in [min, max] (and whole, if asked). */
export function parseSetting(text: string, min: number, max: number, whole: boolean): number | undefined {
    if (text.trim() === "") {
        return undefined;
    }
    const value = Number(text);
    if (!Number.isFinite(value) || value < min || value > max || (whole && !Number.isInteger(value))) {
        return undefined;
    }
    return value;
}

/**
 * A workspace's settings: system prompt, temperature, max tokens, colour; and Clear chat.
 * A number that is out of range says so and is not applied.
 */
export function WorkspaceSettingsForm({ workspace }: { readonly workspace: Workspace }) {
    const { chat } = useAppServices();
    const update = useWorkspaceStore((state) => state.updateSettings);
    const [temperature, setTemperature] = useState(String(workspace.settings.temperature));
    const [maxTokens, setMaxTokens] = useState(String(workspace.settings.maxTokens));
    const temperatureValue = parseSetting(temperature, workspaceLimits.minTemperature, workspaceLimits.maxTemperature, false);
    const maxTokensValue = parseSetting(maxTokens, workspaceLimits.minMaxTokens, workspaceLimits.maxMaxTokens, true);

    return (
        <div className="settings-form">
            <label className="field">
                <span>System prompt</span>
                <textarea
                    aria-label="System prompt"
                    rows={3}
                    value={workspace.settings.systemPrompt}
                    maxLength={workspaceLimits.maxSystemPromptChars}
                    onChange={(event) => update(workspace.id, { systemPrompt: event.target.value })}
                />
            </label>
            <div className="field-row">
                <label className="field">
                    <span>Temperature</span>
                    <input
                        type="number"
                        aria-label="Temperature"
                        min={workspaceLimits.minTemperature}
                        max={workspaceLimits.maxTemperature}
                        step={0.1}
                        value={temperature}
                        aria-invalid={temperatureValue === undefined}
                        onChange={(event) => {
                            setTemperature(event.target.value);
                            const value = parseSetting(
                                event.target.value,
                                workspaceLimits.minTemperature,
                                workspaceLimits.maxTemperature,
                                false
                            );
                            if (value !== undefined) {
                                update(workspace.id, { temperature: value });
                            }
                        }}
                    />
                </label>
                <label className="field">
                    <span>Max tokens</span>
                    <input
                        type="number"
                        aria-label="Max tokens"
                        min={workspaceLimits.minMaxTokens}
                        max={workspaceLimits.maxMaxTokens}
                        step={1}
                        value={maxTokens}
                        aria-invalid={maxTokensValue === undefined}
                        onChange={(event) => {
                            setMaxTokens(event.target.value);
                            const value = parseSetting(
                                event.target.value,
                                workspaceLimits.minMaxTokens,
                                workspaceLimits.maxMaxTokens,
                                true
                            );
                            if (value !== undefined) {
                                update(workspace.id, { maxTokens: value });
                            }
                        }}
                    />
                </label>
            </div>
            {temperatureValue === undefined && (
                <p className="inline-error" role="status">
                    Temperature is a number from 0 (greedy) to 2; still using {workspace.settings.temperature}.
                </p>
            )}
            {maxTokensValue === undefined && (
                <p className="inline-error" role="status">
                    Max tokens is a whole number from 1 to 1,048,576; still using {workspace.settings.maxTokens}.
                </p>
            )}
            <fieldset className="colour-picker">
                <legend>Colour</legend>
                {workspacePalette.map((colour, index) => (
                    <label key={colour.name} className="colour-option" title={colour.name}>
                        <input
                            type="radio"
                            name={`colour-${workspace.id}`}
                            aria-label={`Colour ${colour.name}`}
                            checked={paletteColour(workspace.colour) === colour}
                            onChange={() => useWorkspaceStore.getState().setColour(workspace.id, index)}
                        />
                        <Swatch colour={colour.hex} size={18} />
                    </label>
                ))}
            </fieldset>
            <button
                type="button"
                onClick={() => void chat.clearChat(workspace.id)}
                disabled={workspace.messages.length === 0}
                aria-label="Clear this workspace's chat"
            >
                Clear chat
            </button>
        </div>
    );
}
