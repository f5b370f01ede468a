import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { workspaceLimits } from "./workspaceDefaults.js";

/** Inline rename: Enter or Save keeps the name, Esc or Cancel leaves it as it was. */
export function RenameForm({
    name,
    onRename,
    onDone
}: {
    readonly name: string;
    readonly onRename: (name: string) => void;
    readonly onDone: () => void;
}) {
    const [value, setValue] = useState(name);
    const inputRef = useRef<HTMLInputElement>(null);
    useEffect(() => {
        inputRef.current?.focus();
        inputRef.current?.select();
    }, []);
    const submit = (event: FormEvent): void => {
        event.preventDefault();
        if (value.trim() !== "") {
            onRename(value);
        }
        onDone();
    };
    const onKeyDown = (event: KeyboardEvent): void => {
        if (event.key === "Escape") {
            event.stopPropagation();
            onDone();
        }
    };
    return (
        <form className="rename-form" onSubmit={submit} aria-label="Rename workspace">
            <input
                ref={inputRef}
                type="text"
                aria-label="Workspace name"
                value={value}
                maxLength={workspaceLimits.maxNameChars}
                onChange={(event) => setValue(event.target.value)}
                onKeyDown={onKeyDown}
            />
            <button type="submit" aria-label="Save the name" disabled={value.trim() === ""}>
                Save
            </button>
            <button type="button" aria-label="Cancel renaming" onClick={onDone}>
                Cancel
            </button>
        </form>
    );
}
