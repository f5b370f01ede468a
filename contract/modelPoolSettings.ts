// The settings of the local models beside the engine's own (host/supervisor/EnginePool.ts): how long
// an unused one stays loaded, what all of them may take together, and the folders searched for
// GGUF files beside LM Studio's, Ollama's and Hugging Face's. settings.json keeps them under these
// names; the headless server's --model-idle-seconds, --models-memory-mb and --models-folder override
// them for one run.

export interface ModelPoolSettings {
    /** A model loaded for a workspace or a request is unloaded after this many seconds without one (Ollama's keep_alive). */
    readonly modelIdleSeconds: number;
    /** What every loaded model's plan together may take, in MiB; null: the machine's RAM. */
    readonly modelsMemoryMb: number | null;
    /** Absolute paths of folders whose GGUF files are served in place. */
    readonly modelsFolders: readonly string[];
}

export type ModelPoolSettingName = keyof ModelPoolSettings;

/** As Ollama's default keep_alive of 5 minutes. */
export const modelPoolSettingDefaults: ModelPoolSettings = Object.freeze({
    modelIdleSeconds: 300,
    modelsMemoryMb: null,
    modelsFolders: Object.freeze([])
});

/** What each may be: checked the same on the screen, in the RPC, in the file and on the command line. */
export const modelPoolSettingLimits = Object.freeze({
    /** A week: longer is "never unload", which the budget's eviction covers better. */
    modelIdleSeconds: { min: 1, max: 7 * 24 * 3600 },
    /** 16 TiB in MiB: beyond any machine this runs on. */
    modelsMemoryMb: { min: 1, max: 16 * 1024 * 1024 },
    maxFolders: 32,
    maxFolderChars: 4_096
});

/** The settings as the settings screen shows them: the file's, what is in force, and which the command line set for this run. */
export interface ModelPoolSettingsView {
    /** What settings.json keeps (what the next start uses, but for command-line values). */
    readonly saved: ModelPoolSettings;
    /** What the pool runs with now: the file's with the command line's on top. */
    readonly running: ModelPoolSettings;
    /** Each setting given on the command line for this run, with its flag: not editable here. */
    readonly fromCommandLine: Readonly<Partial<Record<ModelPoolSettingName, string>>>;
    /** The machine's RAM in MiB: what a null budget stands for. */
    readonly machineMemoryMb: number;
}
