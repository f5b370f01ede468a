import { useState } from "react";
import type { AppSettingsView, EngineSettingsPlan } from "../../contract/settings.js";
import { useAppServices } from "../AppServices.js";
import { formatBytes } from "../model/modelText.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useEngineStore } from "../stores/engineStore.js";
import {
    engineFields,
    formOf,
    GPU_LAYERS_CHOICE,
    gpuLayersChoiceOf,
    readEngineForm,
    type EngineField,
    type EngineForm
} from "./engineSettingsForm.js";

type Step =
    | { readonly kind: "editing" }
    | { readonly kind: "planning" }
    | { readonly kind: "planned"; readonly plan: EngineSettingsPlan }
    | { readonly kind: "applying"; readonly plan: EngineSettingsPlan }
    | { readonly kind: "applied"; readonly plan: EngineSettingsPlan }
    | { readonly kind: "error"; readonly code: string; readonly message: string };

/**
 * The engine settings: edited, then planned (planEngineSettings: the memory each part will take
 * against this machine's free memory, and what restarts), then applied (applyEngineSettings: the
 * engine restarts with them, running turns end with engine_settings_changed). A setting given on
 * the headless server's command line is shown with its flag and cannot be edited here.
 */
export function EngineSettingsSection({
    view,
    onView
}: {
    readonly view: AppSettingsView;
    readonly onView: (view: AppSettingsView) => void;
}) {
    const { rpc } = useAppServices();
    const [form, setForm] = useState<EngineForm>(() => formOf(view.running));
    const [step, setStep] = useState<Step>({ kind: "editing" });
    const reading = readEngineForm(form, view.running);
    // The engine's backend: without a GPU, node-llama-cpp keeps every layer on the CPU.
    const compute = useEngineStore((state) => state.info?.compute);
    const cpuOnly = compute?.backend === "cpu";

    const edit = (name: keyof EngineForm, value: string): void => {
        setForm((current) => ({ ...current, [name]: value }));
        setStep({ kind: "editing" });
    };
    const plan = (): void => {
        if (reading.kind !== "change") {
            return;
        }
        setStep({ kind: "planning" });
        rpc.call("planEngineSettings", reading.change).then(
            (planned) => setStep({ kind: "planned", plan: planned }),
            (failure: unknown) => setStep({ kind: "error", ...errorOf(failure) })
        );
    };
    const apply = (planned: EngineSettingsPlan): void => {
        if (reading.kind !== "change") {
            return;
        }
        setStep({ kind: "applying", plan: planned });
        rpc.call("applyEngineSettings", reading.change).then(
            (applied) => {
                // The model panel and the meters read the new window from here at once.
                useEngineStore.setState({ info: applied.info, infoError: undefined });
                onView(applied.view);
                setForm(formOf(applied.view.running));
                setStep({ kind: "applied", plan: applied.plan });
            },
            (failure: unknown) => setStep({ kind: "error", ...errorOf(failure) })
        );
    };
    const busy = step.kind === "planning" || step.kind === "applying";
    const shown = step.kind === "planned" || step.kind === "applying" || step.kind === "applied" ? step.plan : undefined;

    return (
        <section className="settings-section" aria-labelledby="engine-settings-heading" data-engine-settings={step.kind}>
            <h3 id="engine-settings-heading">Engine</h3>
            <form
                className="settings-form"
                onSubmit={(event) => {
                    event.preventDefault();
                    plan();
                }}
            >
                {engineFields.map((field) => {
                    const flag = view.fromCommandLine[field.name];
                    const id = `engine-setting-${field.name}`;
                    return (
                        <div className="settings-field" key={field.name} data-setting={field.name}>
                            <label htmlFor={id}>{field.label}</label>
                            {field.kind === "gpuLayers" ? (
                                <GpuLayersInput
                                    id={id}
                                    text={form[field.name]}
                                    choices={field.choices!}
                                    disabled={flag !== undefined || busy}
                                    onChange={(value) => edit(field.name, value)}
                                />
                            ) : field.kind === "choice" ? (
                                <select
                                    id={id}
                                    value={form[field.name]}
                                    disabled={flag !== undefined || busy}
                                    onChange={(event) => edit(field.name, event.currentTarget.value)}
                                >
                                    {field.choices!.map((choice) => (
                                        <option key={choice.value} value={choice.value}>
                                            {choice.label}
                                        </option>
                                    ))}
                                </select>
                            ) : (
                                <input
                                    id={id}
                                    inputMode={field.kind === "path" ? "text" : field.kind === "probability" ? "decimal" : "numeric"}
                                    value={form[field.name]}
                                    placeholder={
                                        field.kind === "countOrAuto" ? "Kvault's choice" : field.kind === "path" ? "none" : undefined
                                    }
                                    disabled={flag !== undefined || busy}
                                    onChange={(event) => edit(field.name, event.currentTarget.value)}
                                />
                            )}
                            <span className="settings-help">
                                {flag !== undefined
                                    ? `Given on the command line (${flag}) for this run; restart the server without it to change it here.`
                                    : field.help}
                                {field.kind === "gpuLayers" && cpuOnly && form.gpu === "auto" && (
                                    <span data-gpu-note="cpu"> No GPU: layers stay on the CPU.</span>
                                )}
                                {field.name === "gpu" && compute !== undefined && (
                                    <span data-gpu-devices={compute.backend}>
                                        {" "}
                                        Running on {compute.backend} ({compute.binary})
                                        {compute.devices.length === 0
                                            ? ""
                                            : `: ${compute.devices.map((device) => `${device.name}, ${device.type} device`).join("; ")}`}
                                        {compute.deviceMemory === undefined
                                            ? ""
                                            : `, ${formatBytes(compute.deviceMemory.usedBytes)} of ${formatBytes(compute.deviceMemory.totalBytes)} device memory`}
                                        {compute.fallback === undefined ? "." : `. ${compute.fallback}.`}
                                        {compute.slowerPath === undefined ? (
                                            ""
                                        ) : (
                                            <span data-slower-path=""> {`The ${compute.slowerPath}.`}</span>
                                        )}
                                    </span>
                                )}
                            </span>
                        </div>
                    );
                })}
                {reading.kind === "invalid" && <p className="settings-error">{reading.message}</p>}
                <div className="settings-actions">
                    <button type="submit" disabled={busy || reading.kind !== "change"} aria-label="Show the memory it takes">
                        {step.kind === "planning" ? "Working out the memory…" : "Show the memory it takes"}
                    </button>
                </div>
            </form>
            {shown !== undefined && <PlanView plan={shown} />}
            {step.kind === "planned" && step.plan.changed.length > 0 && (
                <div className="settings-actions">
                    <button
                        type="button"
                        disabled={!step.plan.fits}
                        onClick={() => apply(step.plan)}
                        aria-label="Apply and restart the engine"
                    >
                        Apply and restart the engine
                    </button>
                </div>
            )}
            {step.kind === "applying" && <p className="settings-note">Restarting the engine with the new settings…</p>}
            {step.kind === "applied" && (
                <p className="settings-note" data-applied="true">
                    Applied: the engine restarted with these settings, and settings.json keeps them.
                </p>
            )}
            {step.kind === "error" && (
                <p className="settings-error" role="alert" data-error-code={step.code}>
                    {step.message}
                </p>
            )}
        </section>
    );
}

/** GPU layers: all that fit, or a number of layers, typed in the input that choosing the number shows. */
function GpuLayersInput({
    id,
    text,
    choices,
    disabled,
    onChange
}: {
    readonly id: string;
    readonly text: string;
    readonly choices: NonNullable<EngineField["choices"]>;
    readonly disabled: boolean;
    readonly onChange: (text: string) => void;
}) {
    const choice = gpuLayersChoiceOf(text);
    return (
        <span className="settings-gpu">
            <select
                id={id}
                value={choice}
                disabled={disabled}
                onChange={(event) => onChange(event.currentTarget.value === GPU_LAYERS_CHOICE ? "" : event.currentTarget.value)}
            >
                {choices.map((option) => (
                    <option key={option.value} value={option.value}>
                        {option.label}
                    </option>
                ))}
            </select>
            {choice === GPU_LAYERS_CHOICE && (
                <input
                    id={`${id}-layers`}
                    aria-label="GPU layers"
                    inputMode="numeric"
                    value={text}
                    placeholder="layers"
                    disabled={disabled}
                    onChange={(event) => onChange(event.currentTarget.value)}
                />
            )}
        </span>
    );
}

function PlanView({ plan }: { readonly plan: EngineSettingsPlan }) {
    return (
        <div className="settings-plan" data-fits={plan.fits ? "yes" : "no"}>
            <table>
                <tbody>
                    {plan.memory.map((line) => (
                        <tr key={`${line.what}-${line.where}`} data-memory={line.what} data-where={line.where}>
                            <td>{line.label}</td>
                            <td className="settings-bytes">{formatBytes(line.bytes)}</td>
                            <td>{line.where === "vram" ? "GPU" : "RAM"}</td>
                        </tr>
                    ))}
                </tbody>
            </table>
            <p data-plan="ram">
                RAM: {formatBytes(plan.ramNeededBytes)} needed of {formatBytes(plan.ramAvailableBytes)} available for the engine
                {plan.vramNeededBytes > 0 &&
                    ` · GPU: ${formatBytes(plan.vramNeededBytes)}${plan.vramAvailableBytes === null ? "" : ` of ${formatBytes(plan.vramAvailableBytes)}`}`}
                . llama.cpp's compute buffers come on top.
            </p>
            {plan.problems.map((problem) => (
                <p key={problem} className="settings-error" data-plan="problem">
                    {problem}
                </p>
            ))}
            {plan.notes.map((note) => (
                <p key={note} className="settings-note">
                    {note}
                </p>
            ))}
            <p data-plan="restart">{plan.restart ?? "Nothing changes: these are the settings the engine runs with."}</p>
        </div>
    );
}

function errorOf(failure: unknown): { readonly code: string; readonly message: string } {
    const error = toRpcError(failure);
    return { code: error.code, message: error.message };
}
