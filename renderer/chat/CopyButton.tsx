import { useEffect, useState } from "react";

/** Copies `text` to the clipboard and says whether it worked. */
export function CopyButton({ text, label }: { readonly text: string; readonly label: string }) {
    const [result, setResult] = useState<"copied" | "failed">();
    useEffect(() => {
        if (result === undefined) {
            return;
        }
        const timer = setTimeout(() => setResult(undefined), 1_500);
        return () => clearTimeout(timer);
    }, [result]);
    const copy = (): void => {
        navigator.clipboard.writeText(text).then(
            () => setResult("copied"),
            () => setResult("failed")
        );
    };
    return (
        <button type="button" className="link-button" onClick={copy} aria-label={label}>
            {result === "copied" ? "Copied" : result === "failed" ? "Copy failed" : "Copy"}
        </button>
    );
}
