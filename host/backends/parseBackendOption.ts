// `--backend NAME=URL[,key-env=VAR][,model=ID][,allow-remote]` (npm run serve, repeatable).
import { backendNamePattern } from "../../contract/backends.js";
import { KvaultError } from "../../engine/index.js";
import { checkBackendEntry, type BackendConfig, type BackendEntryField } from "./BackendConfig.js";

export class BackendOptionError extends KvaultError {
    readonly code = "invalid_backend_option";
}

/** One --backend value, its key read from `env`; every mistake says which part and why (the rules: checkBackendEntry). */
export function parseBackendOption(text: string, env: Readonly<Record<string, string | undefined>>): BackendConfig {
    const equals = text.indexOf("=");
    const name = equals === -1 ? "" : text.slice(0, equals);
    if (!backendNamePattern.test(name)) {
        throw new BackendOptionError(
            `--backend "${text.slice(0, 80)}" does not start with NAME=: the name is 1 to 40 letters, digits, '_' or '-'.`
        );
    }
    const [url = "", ...parts] = text.slice(equals + 1).split(",");
    let keyEnv: string | undefined;
    let model: string | undefined;
    let allowRemote = false;
    for (const part of parts) {
        const [key, ...rest] = part.split("=");
        const value = rest.join("=");
        if (key === "key-env" && /^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(value) && keyEnv === undefined) {
            keyEnv = value;
        } else if (key === "model" && value !== "" && model === undefined) {
            model = value;
        } else if (part === "allow-remote") {
            allowRemote = true;
        } else {
            throw new BackendOptionError(
                `--backend ${name}: "${part.slice(0, 80)}" is not key-env=VAR (a variable name), model=ID or allow-remote, or is given twice.`
            );
        }
    }
    const key = keyEnv === undefined ? undefined : env[keyEnv];
    if (keyEnv !== undefined && (key === undefined || key === "")) {
        throw new BackendOptionError(`--backend ${name}: key-env=${keyEnv}, but $${keyEnv} is not set. Set it to the backend's key.`);
    }
    const checked = checkBackendEntry({ name, url, model, key, keyEnv, allowRemote });
    if (!checked.ok) {
        throw new BackendOptionError(`--backend ${name}: ${checked.reason}.${optionRemedies[checked.field]}`);
    }
    return checked.config;
}

/** What to change on the command line, for each part checkBackendEntry may refuse. */
const optionRemedies: Readonly<Record<BackendEntryField, string>> = {
    name: "",
    url: "",
    model: " Give model=ID with the backend's own id.",
    key: ` Set the variable to the backend's key as its server expects it.`,
    allowRemote: " Add ,allow-remote if that is what you want."
};

/** The warning serve prints for each backend beyond loopback (the settings screen shows the same). */
export { remoteBackendWarning } from "../../contract/backends.js";
