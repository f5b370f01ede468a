import { THEMES, useThemeStore, type Theme } from "./themeStore.js";

const themeLabels: Readonly<Record<Theme, string>> = { system: "System", light: "Light", dark: "Dark" };

/** The Settings view's appearance: light, dark, or the system's. */
export function ThemeSection() {
    const theme = useThemeStore((state) => state.theme);
    return (
        <section className="settings-section" aria-labelledby="theme-heading">
            <h3 id="theme-heading">Appearance</h3>
            <div role="radiogroup" aria-labelledby="theme-heading" className="theme-choices">
                {THEMES.map((choice) => (
                    <label key={choice}>
                        <input
                            type="radio"
                            name="theme"
                            value={choice}
                            checked={theme === choice}
                            onChange={() => useThemeStore.getState().setTheme(choice)}
                        />{" "}
                        {themeLabels[choice]}
                    </label>
                ))}
            </div>
        </section>
    );
}
