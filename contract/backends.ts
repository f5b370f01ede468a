// Remote backends as the renderer sees them (rpcSpec `listBackends`): a workspace runs on this
// computer's engine or on one of them (contract/workspaces.ts WorkspaceMeta.backend).

/** One model a backend offers, with the window it states for it (and where), when it states one. */
export interface BackendModelView {
    readonly id: string;
    readonly window?: { readonly tokens: number; readonly source: string };
}

export interface BackendView {
    /** What `--backend NAME=URL` named it. */
    readonly name: string;
    /** Its OpenAI-compatible base URL (never its key). */
    readonly apiBase: string;
    /** Whether the URL reaches beyond this machine. */
    readonly remote: boolean;
    /** Its models now; empty when it could not be asked (then `error` says why). */
    readonly models: readonly BackendModelView[];
    readonly error?: { readonly code: string; readonly message: string };
}

/** A backend's name: 1 to 40 letters, digits, '_' or '-' (Kvault's API lists its models as `NAME/<model id>`). */
export const backendNamePattern = /^[A-Za-z0-9_-]{1,40}$/;

/** A backend's model id, in characters. */
export const maxBackendModelChars = 512;

/** A number a remote backend gave, with where it came from; or why there is none (never a guess). */
export type RemoteFigure<T> =
    | ({ readonly kind: "known"; readonly source: string } & T)
    | { readonly kind: "unknown"; readonly reason: string };

/** A draft measured on a workspace's remote backend (rpcSpec `measureRemote`): each figure from the server itself. */
export interface RemoteMeasurement {
    readonly workspace: string;
    readonly backend: string;
    readonly model: string;
    /** Tokens the conversation uses and the draft adds, as the server's own tokenizer and chat template count them. */
    readonly tokens: RemoteFigure<{ readonly usedTokens: number; readonly draftTokens: number }>;
    /** The window one request may use (llama-server's: per slot). */
    readonly window: RemoteFigure<{ readonly tokens: number }>;
    /** The share of the server's whole KV cache in use now, 0..1, from its Prometheus metrics. */
    readonly kvUsage: RemoteFigure<{ readonly ratio: number }>;
}

/** The leak probe's plan against a target (rpcSpec `planLeakProbe`): shown, with its cost, before anything is sent. */
export interface LeakProbePlanView {
    /** "kvault" (this Kvault's own API) or `NAME/<model id>` (a backend's model). */
    readonly target: string;
    readonly url: string;
    readonly model: string;
    readonly window: number;
    readonly windowSource: string;
    readonly numRequests: number;
    readonly promptTokens: number;
    readonly completionTokens: number;
    /** Whether the target is beyond this machine (it may bill for the tokens). */
    readonly remote: boolean;
}

/** A finished probe run (rpcSpec `runLeakProbe`): the verdict per probe and overall (probe/probeReport.ts, in short). */
export interface LeakProbeVerdicts {
    readonly target: string;
    readonly url: string;
    readonly model: string;
    readonly identities: string;
    readonly window: number;
    readonly verdict: "pass" | "finding" | "inconclusive";
    readonly probes: readonly {
        readonly id: string;
        readonly title: string;
        readonly verdict: "pass" | "finding" | "inconclusive";
        readonly reason: string;
    }[];
    readonly numExchanges: number;
    readonly elapsedMs: number;
}

/** A key typed in the settings, sent upstream as a Bearer token: printable ASCII without spaces (safe in a header). */
export const backendKeyPattern = /^[\x21-\x7e]{1,4096}$/;

/** A backend's URL as typed, in characters. */
export const maxBackendUrlChars = 2_048;

/** More backends than anyone sets up by hand; a settings file with more is damaged or hostile. */
export const maxStoredBackends = 64;

/**
 * The warning for a backend beyond loopback: serve prints it on stderr, and the settings screen
 * shows it beside "allow beyond this machine" and on the backend's line.
 */
export function remoteBackendWarning(config: { readonly name: string; readonly apiBase: string }): string {
    return (
        `Warning: backend "${config.name}" is at ${config.apiBase}, beyond this machine: the chats of workspaces on it, and requests for ${config.name}/… to Kvault's API, are sent there` +
        (config.apiBase.startsWith("http:") ? ", over plain HTTP (no TLS)." : ".")
    );
}

/** One backend in force, as the settings screen lists it (rpcSpec `getSettings`): never its key. */
export interface BackendSettingView {
    readonly name: string;
    /** Its OpenAI-compatible base URL (a URL typed without a path gets `/v1`). */
    readonly apiBase: string;
    /** The one model it offers; null: every model its `/v1/models` lists. */
    readonly model: string | null;
    /** Whether a key is sent to it (typed in the settings, or from `key-env=VAR`); the key itself never leaves the host. */
    readonly hasKey: boolean;
    /** The environment variable the command line's key was read from; null otherwise. */
    readonly keyEnv: string | null;
    /** Whether its URL reaches beyond this machine (allowed with "allow beyond this machine", or `,allow-remote`). */
    readonly remote: boolean;
    /** remoteBackendWarning's text for a remote one; null on loopback. */
    readonly warning: string | null;
}

/** The remote backends on the settings screen: the ones in force, and where they come from. */
export interface BackendsSettingView {
    readonly list: readonly BackendSettingView[];
    /**
     * "settings": settings.json's, added, edited and removed on the screen; "command line":
     * `--backend` was given for this run, so its backends are in force instead and cannot be changed
     * here (settings.json keeps its own `numStored` for a start without `--backend`).
     */
    readonly source: "settings" | "command line";
    readonly numStored: number;
}
