import { KvaultError } from "../../engine/index.js";

/** A turn or call ended because the engine restarted with new settings (applyEngineSettings). */
export class EngineSettingsChangedError extends KvaultError {
    readonly code = "engine_settings_changed";

    constructor(what: "turn" | "call", change: string) {
        super(
            what === "turn"
                ? `The engine restarted with new settings (${change}) while this turn ran; send the message again.`
                : `The engine restarted with new settings (${change}) before this call was answered; try again.`
        );
    }
}

/** The engine settings asked for cannot be applied: they do not fit this machine, or they do not work together. */
export class EngineSettingsRefusedError extends KvaultError {
    readonly code = "engine_settings_refused";
}

/** A setting given on the command line for this run was to be changed on the settings screen. */
export class SettingFromCommandLineError extends KvaultError {
    readonly code = "setting_from_command_line";
}

/** No API key by that id, or one that cannot be revoked here (the command line's). */
export class ApiKeyNotRevocableError extends KvaultError {
    readonly code = "api_key_not_revocable";
}

/** Creating one more API key than settings.json keeps (MAX_STORED_API_KEYS): the next start would drop it. */
export class ApiKeyLimitError extends KvaultError {
    readonly code = "api_key_limit_reached";
}

/** A host without settings (a test's server) was asked for them, or the headless server for the desktop app's local API switch. */
export class SettingsUnavailableError extends KvaultError {
    readonly code = "settings_unavailable";
}

/** A remote backend asked for on the settings screen breaks `--backend`'s rules, or is not there to remove. */
export class BackendSettingError extends KvaultError {
    readonly code = "invalid_backend_setting";
}
