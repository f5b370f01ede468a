import { useEffect } from "react";
import { create } from "zustand";

/** "system" follows the operating system's light or dark preference (App.css's media query). */
export type Theme = "system" | "light" | "dark";

export const THEMES: readonly Theme[] = ["system", "light", "dark"];

/** Where the page keeps the choice: it is this browser's (or window's) look, not a setting of the server. */
const THEME_STORAGE_KEY = "kvault.theme";
const DEFAULT_THEME: Theme = "system";

function storedTheme(): Theme {
    const stored = globalThis.localStorage?.getItem(THEME_STORAGE_KEY);
    return THEMES.find((theme) => theme === stored) ?? DEFAULT_THEME;
}

export interface ThemeState {
    readonly theme: Theme;
    setTheme(theme: Theme): void;
}

export const useThemeStore = create<ThemeState>()((set) => ({
    theme: storedTheme(),
    setTheme: (theme) => {
        globalThis.localStorage?.setItem(THEME_STORAGE_KEY, theme);
        set({ theme });
    }
}));

/** Puts the chosen theme on <html data-theme>, which App.css's colour variables follow. */
export function useTheme(): void {
    const theme = useThemeStore((state) => state.theme);
    useEffect(() => {
        document.documentElement.dataset["theme"] = theme;
    }, [theme]);
}
