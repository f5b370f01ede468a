import { useState } from "react";
import { useAppServices } from "../AppServices.js";
import { PresetPanel } from "../presets/PresetPanel.js";
import { RetrievalSwitch } from "../retrieval/RetrievalSwitch.js";
import { WorkspaceMcpSettings } from "../mcp/WorkspaceMcpSettings.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { BackendSelect } from "./BackendSelect.js";
import { WorkspaceModelPicker } from "../models/WorkspaceModelPicker.js";
import { ConfirmDialog } from "./ConfirmDialog.js";
import { NumberSetting } from "./NumberSetting.js";
import { parseStopStrings, presetOf, samplingPresets } from "./samplingPresets.js";
import { Swatch } from "./Swatch.js";
import type { Workspace, WorkspaceSettings } from "./Workspace.js";
import { workspaceLimits } from "./workspaceDefaults.js";
import { WorkspaceKvShare } from "./WorkspaceKvShare.js";
import { KeepKvOnDiskToggle } from "./KeepKvOnDiskToggle.js";
import { paletteColour, workspacePalette } from "./workspacePalette.js";

export { parseSetting } from "./parseSetting.js";

/**
 * A workspace's settings: system prompt, the sampler (with presets), max tokens, seed, stop
 * strings, colour; the model's window and this workspace's share of KV beside them; and Clear chat
 * (asked first). A number out of range says so and is not applied; an empty optional one is the
 * engine's default.
 */
export function WorkspaceSettingsForm({ workspace }: { readonly workspace: Workspace }) {
    const { chat } = useAppServices();
    const update = (patch: Partial<WorkspaceSettings>): void => useWorkspaceStore.getState().updateSettings(workspace.id, patch);
    const settings = workspace.settings;
    const [stopText, setStopText] = useState((settings.stop ?? []).join("\n"));
    const [confirmingClear, setConfirmingClear] = useState(false);
    const stopRead = parseStopStrings(stopText, workspaceLimits.maxStopStrings, workspaceLimits.maxStopChars);
    const preset = presetOf(settings);
    const numMessages = workspace.messages.length + (workspace.branches ?? []).length;

    return (
        <div className="settings-form">
            <BackendSelect workspace={workspace} />
            <WorkspaceModelPicker workspace={workspace} />
            <label className="field">
                <span>System prompt</span>
                <textarea
                    aria-label="System prompt"
                    rows={3}
                    value={settings.systemPrompt}
                    maxLength={workspaceLimits.maxSystemPromptChars}
                    onChange={(event) => update({ systemPrompt: event.target.value })}
                />
            </label>
            <fieldset className="preset-picker">
                <legend>Preset</legend>
                {samplingPresets.map(({ name, description, knobs }) => (
                    <button
                        key={name}
                        type="button"
                        aria-pressed={preset === name}
                        title={description}
                        aria-label={`Preset ${name}: ${description}`}
                        onClick={() => update(knobs)}
                    >
                        {name}
                    </button>
                ))}
                <span className="field-hint">{preset === undefined ? "Custom settings." : `${preset}.`}</span>
            </fieldset>
            <PresetPanel workspace={workspace} />
            <div className="field-row">
                <NumberSetting
                    label="Temperature"
                    value={settings.temperature}
                    min={workspaceLimits.minTemperature}
                    max={workspaceLimits.maxTemperature}
                    step={0.1}
                    hint="0 is greedy: always the likeliest token."
                    onChange={(value) => value !== undefined && update({ temperature: value })}
                />
                <NumberSetting
                    label="Max tokens"
                    value={settings.maxTokens}
                    min={workspaceLimits.minMaxTokens}
                    max={workspaceLimits.maxMaxTokens}
                    step={1}
                    whole
                    hint="The longest answer, in tokens."
                    onChange={(value) => value !== undefined && update({ maxTokens: value })}
                />
            </div>
            <div className="field-row">
                <NumberSetting
                    label="Top-p"
                    value={settings.topP}
                    min={0}
                    max={1}
                    step={0.05}
                    optional
                    onChange={(topP) => update({ topP })}
                />
                <NumberSetting
                    label="Top-k"
                    value={settings.topK}
                    min={0}
                    max={workspaceLimits.maxTopK}
                    step={1}
                    whole
                    optional
                    onChange={(topK) => update({ topK })}
                />
                <NumberSetting
                    label="Min-p"
                    value={settings.minP}
                    min={0}
                    max={1}
                    step={0.01}
                    optional
                    onChange={(minP) => update({ minP })}
                />
            </div>
            <div className="field-row">
                <NumberSetting
                    label="Repeat penalty"
                    value={settings.repeatPenalty}
                    min={0}
                    max={workspaceLimits.maxRepeatPenalty}
                    step={0.05}
                    optional
                    hint="Above 1 makes repeating recent tokens less likely."
                    onChange={(repeatPenalty) => update({ repeatPenalty })}
                />
                <NumberSetting
                    label="Seed"
                    value={settings.seed}
                    min={0}
                    max={workspaceLimits.maxSeed}
                    step={1}
                    whole
                    optional
                    hint="The same seed, settings and chat give the same answer."
                    onChange={(seed) => update({ seed })}
                />
            </div>
            <label className="field">
                <span>Stop strings (one a line)</span>
                <textarea
                    aria-label="Stop strings"
                    rows={2}
                    value={stopText}
                    aria-invalid={!stopRead.ok}
                    onChange={(event) => {
                        setStopText(event.target.value);
                        const read = parseStopStrings(event.target.value, workspaceLimits.maxStopStrings, workspaceLimits.maxStopChars);
                        if (read.ok) {
                            update({ stop: read.stop });
                        }
                    }}
                />
                {!stopRead.ok && (
                    <span className="inline-error" role="status">
                        {stopRead.reason}; still using {(settings.stop ?? []).length} stop string(s).
                    </span>
                )}
            </label>
            <WorkspaceKvShare workspace={workspace} />
            <RetrievalSwitch workspace={workspace} />
            <KeepKvOnDiskToggle workspace={workspace} />
            <WorkspaceMcpSettings workspace={workspace} />
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
                onClick={() => setConfirmingClear(true)}
                disabled={numMessages === 0}
                aria-label="Clear this workspace's chat"
            >
                Clear chat
            </button>
            {confirmingClear && (
                <ConfirmDialog
                    id="confirm-clear"
                    title={`Clear the chat of “${workspace.name}”?`}
                    keepLabel="Keep the chat"
                    confirmText="Clear"
                    confirmLabel={`Clear the chat of ${workspace.name} for good`}
                    onClose={() => setConfirmingClear(false)}
                    onConfirm={() => {
                        setConfirmingClear(false);
                        void chat.clearChat(workspace.id);
                    }}
                >
                    All {numMessages} {numMessages === 1 ? "message" : "messages"} (earlier versions included) are deleted, and the engine
                    drops this workspace's KV. The settings stay. This cannot be undone: Export JSON first to keep a copy.
                </ConfirmDialog>
            )}
        </div>
    );
}
