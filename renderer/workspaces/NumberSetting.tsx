import { useEffect, useState } from "react";
import { parseSetting } from "./parseSetting.js";

/**
 * A number field of a workspace's settings. Empty means "not set" where `optional` (the engine's
 * default); a value out of range says so beside the field and is not applied.
 */
export function NumberSetting({
    label,
    value,
    min,
    max,
    step,
    whole = false,
    optional = false,
    hint,
    onChange
}: {
    readonly label: string;
    readonly value: number | undefined;
    readonly min: number;
    readonly max: number;
    readonly step: number;
    readonly whole?: boolean;
    readonly optional?: boolean;
    readonly hint?: string;
    readonly onChange: (value: number | undefined) => void;
}) {
    const [text, setText] = useState(value === undefined ? "" : String(value));
    // A preset (or another window) changed the value: show it, unless the field already says it.
    useEffect(() => {
        setText((current) => (parseSetting(current, min, max, whole) === value ? current : value === undefined ? "" : String(value)));
    }, [value, min, max, whole]);
    const parsed = parseSetting(text, min, max, whole);
    const invalid = parsed === undefined && !(optional && text.trim() === "");
    return (
        <label className="field">
            <span>{label}</span>
            <input
                type="number"
                aria-label={label}
                min={min}
                max={max}
                step={step}
                value={text}
                placeholder={optional ? "default" : undefined}
                aria-invalid={invalid}
                title={hint}
                onChange={(event) => {
                    setText(event.target.value);
                    const next = parseSetting(event.target.value, min, max, whole);
                    if (next !== undefined) {
                        onChange(next);
                    } else if (optional && event.target.value.trim() === "") {
                        onChange(undefined);
                    }
                }}
            />
            {invalid && (
                <span className="inline-error" role="status">
                    {label} is {whole ? "a whole number" : "a number"} from {min} to {max.toLocaleString("en-US")}
                    {optional ? ", or empty for the default" : ""}; still using {value ?? "the default"}.
                </span>
            )}
        </label>
    );
}
