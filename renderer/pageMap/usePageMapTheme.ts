import { useEffect, useState } from "react";
import type { PageMapTheme } from "./pageColour.js";
import { readPageMapTheme } from "./readPageMapTheme.js";

/** The page map's theme, read again when the system switches between light and dark. */
export function usePageMapTheme(): PageMapTheme {
    const [theme, setTheme] = useState(() => readPageMapTheme(document.documentElement));
    useEffect(() => {
        const query = matchMedia("(prefers-color-scheme: dark)");
        const update = (): void => setTheme(readPageMapTheme(document.documentElement));
        query.addEventListener("change", update);
        return () => query.removeEventListener("change", update);
    }, []);
    return theme;
}
