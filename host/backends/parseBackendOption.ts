// `--backend NAME=URL[,key-env=VAR][,model=ID][,allow-remote]` (npm run serve, repeatable).
import { backendNamePattern, maxBackendModelChars } from "../../contract/backends.js";
import { KvaultError } from "../../engine/index.js";
import { backendUrls, type BackendConfig } from "./BackendConfig.js";
import { isLoopbackHost } from "../headless/serveOptions.js";

export class BackendOptionError extends KvaultError {
    readonly code = "invalid_backend_option";
}

/** One --backend value, its key read from `env`; every mistake says which part and why. */
export function parseBackendOption(text: string, env: Readonly<Record<string, string | undefined>>): BackendConfig {
    const equals = text.indexOf("=");
    const name = equals === -1 ? "" : text.slice(0, equals);
    if (!backendNamePattern.test(name)) {
        throw new BackendOptionError(
            `--backend "${text.slice(0, 80)}" does not start with NAME=: the name is 1 to 40 letters, digits, '_' or '-'.`
        );
    }
    const [url = "", ...parts] = text.slice(equals + 1).split(",");
    const urls = backendUrls(url);
    if (!urls.ok) {
        throw new BackendOptionError(`--backend ${name}: ${urls.reason}.`);
    }
    let keyEnv: string | undefined;
    let model: string | undefined;
    let allowRemote = false;
    for (const part of parts) {
        const [key, ...rest] = part.split("=");
        const value = rest.join("=");
        if (key === "key-env" && /^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(value) && keyEnv === undefined) {
            keyEnv = value;
        } else if (key === "model" && value !== "" && value.length <= maxBackendModelChars && model === undefined) {
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
    const remote = !isLoopbackHost(urls.host);
    if (remote && !allowRemote) {
        throw new BackendOptionError(
            `--backend ${name}: ${urls.host} is not a loopback address, so the chats of its workspaces leave this machine. Add ,allow-remote if that is what you want.`
        );
    }
    return {
        name,
        apiBase: urls.apiBase,
        root: urls.root,
        ...(keyEnv === undefined ? {} : { keyEnv, key }),
        ...(model === undefined ? {} : { model }),
        remote
    };
}

/** The warning serve prints for each backend beyond loopback. */
export function remoteBackendWarning(config: BackendConfig): string {
    return (
        `Warning: backend "${config.name}" is at ${config.apiBase}, beyond this machine: the chats of workspaces on it, and requests for ${config.name}/… to Kvault's API, are sent there` +
        (config.apiBase.startsWith("http:") ? ", over plain HTTP (no TLS)." : ".")
    );
}
