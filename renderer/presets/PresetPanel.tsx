import { useEffect, useRef, useState } from "react";
import { presetExport, presetLimits, type Preset } from "../../contract/presets.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { downloadFile } from "../util/downloadFile.js";
import { newId } from "../util/newId.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { copyName, presetPatch } from "./presetSettings.js";
import "./PresetPanel.css";

type Notice = { readonly kind: "done" | "failed"; readonly text: string } | undefined;

/**
 * Saved presets (the host's, contract/presets.ts): apply one to this workspace or to a new one;
 * save this workspace's system prompt and sampling settings as a new preset or over the chosen
 * one; duplicate, delete, export and import (Kvault's export or an LM Studio preset file).
 */
export function PresetPanel({ workspace }: { readonly workspace: Workspace }) {
    const { rpc } = useAppServices();
    const [presets, setPresets] = useState<readonly Preset[] | undefined>(undefined);
    const [chosenId, setChosenId] = useState("");
    const [name, setName] = useState("");
    const [notice, setNotice] = useState<Notice>(undefined);
    const fileInput = useRef<HTMLInputElement>(null);
    const chosen = presets?.find((preset) => preset.id === chosenId);

    useEffect(() => {
        rpc.call("listPresets", {}).then(
            (list) => setPresets(list.presets),
            (error: unknown) => setNotice({ kind: "failed", text: toRpcError(error).message })
        );
    }, [rpc]);

    /** Runs a preset call; its answer is the list now, and `done` says what happened. */
    const run = (work: () => Promise<{ readonly presets: readonly Preset[] }>, done: (presets: readonly Preset[]) => string): void => {
        work().then(
            (list) => {
                setPresets(list.presets);
                setNotice({ kind: "done", text: done(list.presets) });
            },
            (error: unknown) => setNotice({ kind: "failed", text: toRpcError(error).message })
        );
    };
    const save = (preset: Preset, done: string): void =>
        run(
            () => rpc.call("savePreset", { preset }),
            () => {
                setChosenId(preset.id);
                return done;
            }
        );
    const trimmedName = name.trim();

    return (
        <fieldset className="saved-presets" data-num-presets={presets?.length ?? -1}>
            <legend>Saved presets</legend>
            <div className="field-row">
                <select
                    aria-label="Saved preset"
                    value={chosenId}
                    onChange={(event) => {
                        setChosenId(event.target.value);
                        setName(presets?.find((preset) => preset.id === event.target.value)?.name ?? "");
                    }}
                >
                    <option value="">Choose a preset…</option>
                    {presets?.map((preset) => (
                        <option key={preset.id} value={preset.id}>
                            {preset.name}
                        </option>
                    ))}
                </select>
                <button
                    type="button"
                    disabled={chosen === undefined}
                    aria-label="Apply the chosen preset to this workspace"
                    onClick={() => {
                        if (chosen !== undefined) {
                            useWorkspaceStore.getState().updateSettings(workspace.id, presetPatch(chosen.settings));
                            setNotice({ kind: "done", text: `Applied “${chosen.name}” to ${workspace.name}.` });
                        }
                    }}
                >
                    Apply
                </button>
                <button
                    type="button"
                    disabled={chosen === undefined}
                    aria-label="Start a workspace with this preset"
                    onClick={() => {
                        if (chosen !== undefined) {
                            const store = useWorkspaceStore.getState();
                            const created = store.create();
                            store.updateSettings(created.id, presetPatch(chosen.settings));
                        }
                    }}
                >
                    Start a workspace
                </button>
            </div>
            <div className="field-row">
                <input
                    aria-label="Preset name"
                    placeholder="Preset name"
                    value={name}
                    maxLength={presetLimits.maxNameChars}
                    onChange={(event) => setName(event.target.value)}
                />
                <button
                    type="button"
                    disabled={trimmedName === ""}
                    aria-label="Save this workspace's settings as a new preset"
                    onClick={() => save({ id: newId("ui-"), name: trimmedName, settings: workspace.settings }, `Saved “${trimmedName}”.`)}
                >
                    Save new
                </button>
                <button
                    type="button"
                    disabled={chosen === undefined || trimmedName === ""}
                    aria-label="Save this workspace's settings over the chosen preset"
                    onClick={() =>
                        chosen !== undefined &&
                        save({ id: chosen.id, name: trimmedName, settings: workspace.settings }, `Updated “${trimmedName}”.`)
                    }
                >
                    Update
                </button>
            </div>
            <div className="field-row">
                <button
                    type="button"
                    disabled={chosen === undefined}
                    aria-label="Duplicate the chosen preset"
                    onClick={() =>
                        chosen !== undefined &&
                        save(
                            { id: newId("ui-"), name: copyName(chosen.name, presetLimits.maxNameChars), settings: chosen.settings },
                            `Duplicated “${chosen.name}”.`
                        )
                    }
                >
                    Duplicate
                </button>
                <button
                    type="button"
                    className="danger-outline"
                    disabled={chosen === undefined}
                    aria-label="Delete the chosen preset"
                    onClick={() =>
                        chosen !== undefined &&
                        run(
                            () => rpc.call("deletePreset", { id: chosen.id }),
                            () => {
                                setChosenId("");
                                return `Deleted “${chosen.name}”.`;
                            }
                        )
                    }
                >
                    Delete
                </button>
                <button
                    type="button"
                    disabled={presets === undefined || presets.length === 0}
                    aria-label={chosen === undefined ? "Export every preset to a JSON file" : "Export the chosen preset to a JSON file"}
                    onClick={() => {
                        const exported = chosen === undefined ? (presets ?? []) : [chosen];
                        downloadFile("kvault-presets.json", `${JSON.stringify(presetExport(exported), null, 2)}\n`, "application/json");
                    }}
                >
                    Export
                </button>
                <button type="button" onClick={() => fileInput.current?.click()} aria-label="Import presets from a JSON file">
                    Import
                </button>
                <input
                    ref={fileInput}
                    type="file"
                    accept=".json,application/json"
                    hidden
                    aria-label="Preset file to import"
                    onChange={(event) => {
                        const file = event.target.files?.[0];
                        event.target.value = "";
                        if (file !== undefined) {
                            importFile(file);
                        }
                    }}
                />
            </div>
            {notice !== undefined && (
                <p
                    className={notice.kind === "failed" ? "inline-error" : "field-hint"}
                    role={notice.kind === "failed" ? "alert" : "status"}
                >
                    {notice.text}
                </p>
            )}
        </fieldset>
    );

    function importFile(file: File): void {
        file.text().then(
            (text) =>
                rpc.call("importPresets", { fileName: file.name, text }).then(
                    (answer) => {
                        setPresets(answer.presets);
                        const unmapped =
                            answer.unmapped.length === 0 ? "" : ` Not mapped (no such Kvault setting): ${answer.unmapped.join(", ")}.`;
                        setNotice({
                            kind: "done",
                            text: `Imported ${answer.imported.map((preset) => `“${preset.name}”`).join(", ")} from ${file.name}.${unmapped}`
                        });
                    },
                    (error: unknown) => setNotice({ kind: "failed", text: toRpcError(error).message })
                ),
            (error: unknown) => setNotice({ kind: "failed", text: `${file.name} could not be read: ${(error as Error).message}` })
        );
    }
}
