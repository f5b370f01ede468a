import crypto from "node:crypto";
import type { ServerResponse } from "node:http";
import { KvaultError } from "../../engine/index.js";

/** A key's id names its workspace namespace: letters, digits, '_' and '-' (never ':', which ends the prefix). */
export const API_KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,40}$/;
/** As the default key (--api-key): 8 to 200 letters, digits, '_', '.' or '-'. */
export const API_KEY_PATTERN = /^[A-Za-z0-9_.-]{8,200}$/;
/** A key's generation: random hex drawn when the key is made, so that a later key by the same id gets another namespace. */
export const API_KEY_GENERATION_PATTERN = /^[0-9a-f]{16}$/;

/** A new key's generation (API_KEY_GENERATION_PATTERN). */
export function newApiKeyGeneration(): string {
    return crypto.randomBytes(8).toString("hex");
}

export class ApiKeyError extends KvaultError {
    readonly code = "invalid_api_key_entry";
}

export interface ApiKeyEntry {
    readonly id: string;
    readonly key: string;
    /** The key's generation (settings.json keeps it); absent: a new one for this run (a --extra-api-key). */
    readonly generation?: string;
}

interface KeyInForce {
    readonly secret: Buffer;
    /** `ID~GENERATION`: the key's workspace namespace, never the same for two keys, even two of one id. */
    readonly namespace: string;
}

/**
 * The API keys beside the default one, each with its own workspace namespace: a client of key
 * `alice` (generation `g`) naming workspace `w` gets the engine workspace `api@alice~g:w`, while
 * the default key's clients (and nothing else) get `api:w`, as before keys had namespaces. So no
 * key can reach another's KV, nor read how much of a guessed prompt another's workspace holds
 * (cached_tokens); nor can a key made later under a revoked key's id, whose generation differs.
 * Keys can be added and revoked while the server runs; a revoked key is refused with 401 at once.
 */
export class ApiKeys {
    readonly #keys = new Map<string, KeyInForce>();
    /** Each key's answers still being written, so that revoking it ends its open streams (SSE, NDJSON) at once. */
    readonly #answering = new Map<string, Set<ServerResponse>>();

    constructor(entries: readonly ApiKeyEntry[] = []) {
        for (const entry of entries) {
            this.add(entry);
        }
    }

    get ids(): readonly string[] {
        return [...this.#keys.keys()];
    }

    /** Adds a key; a malformed id, key or generation, or an id or key already in use, is an ApiKeyError saying which. */
    add({ id, key, generation = newApiKeyGeneration() }: ApiKeyEntry): void {
        if (!API_KEY_ID_PATTERN.test(id)) {
            throw new ApiKeyError(`The API key id ${JSON.stringify(id.slice(0, 60))} must be 1 to 40 letters, digits, '_' or '-'.`);
        }
        if (!API_KEY_PATTERN.test(key)) {
            throw new ApiKeyError(`The API key for "${id}" must be 8 to 200 characters of letters, digits, '_', '.' or '-'.`);
        }
        if (this.#keys.has(id)) {
            throw new ApiKeyError(`The API key id "${id}" is given twice; give each key its own id.`);
        }
        if (this.identify(key) !== undefined) {
            throw new ApiKeyError(`The API key for "${id}" is the same as another key's; give each its own.`);
        }
        if (!API_KEY_GENERATION_PATTERN.test(generation)) {
            throw new ApiKeyError(`The API key "${id}" has the generation ${JSON.stringify(generation.slice(0, 40))}, not 16 hex digits.`);
        }
        this.#keys.set(id, { secret: Buffer.from(key), namespace: `${id}~${generation}` });
    }

    /** Whether a key by this id is in force. */
    has(id: string): boolean {
        return this.#keys.has(id);
    }

    /** The workspace namespace of the key `id` in force (`ID~GENERATION`), or undefined when there is none by that id. */
    namespaceOf(id: string): string | undefined {
        return this.#keys.get(id)?.namespace;
    }

    /**
     * Revokes the key `id`; false when there is none by that id. Its next request is a 401, and
     * every answer of it still being written ends now with its connection: a stream it has open
     * stops (the client sees the connection drop), rather than running on after the key is gone.
     * An idle keep-alive connection stays open: its next request is checked, and refused, as any.
     */
    revoke(id: string): boolean {
        const revoked = this.#keys.delete(id);
        const answering = this.#answering.get(id);
        this.#answering.delete(id);
        for (const response of answering ?? []) {
            response.socket?.destroy();
        }
        return revoked;
    }

    /** Notes that key `id` is being answered on `response` (host/http/requestGuards.ts), until that answer ends. */
    hold(id: string, response: ServerResponse): void {
        let answering = this.#answering.get(id);
        if (answering === undefined) {
            answering = new Set();
            this.#answering.set(id, answering);
        }
        answering.add(response);
        response.once("close", () => {
            answering.delete(response);
            if (answering.size === 0 && this.#answering.get(id) === answering) {
                this.#answering.delete(id);
            }
        });
    }

    /** The id of the key `given` is, or undefined; every key is compared in constant time. */
    identify(given: string): string | undefined {
        const presented = Buffer.from(given);
        let found: string | undefined;
        for (const [id, { secret }] of this.#keys) {
            if (secret.length === presented.length && crypto.timingSafeEqual(secret, presented)) {
                found = id;
            }
        }
        return found;
    }
}

/** The engine workspace an API client's workspace name stands for, in its key's namespace (undefined: the default key). */
export function apiWorkspace(namespace: string | undefined, name: string): string {
    return namespace === undefined ? `api:${name}` : `${apiNamespacePrefix(namespace)}${name}`;
}

/** What every engine workspace of a key's namespace starts with: what revoking the key forgets. */
export function apiNamespacePrefix(namespace: string): string {
    return `api@${namespace}:`;
}

/** The key id a namespace (`ID~GENERATION`) belongs to, for messages: an id has no '~'. */
export function keyIdOf(namespace: string): string {
    return namespace.slice(0, namespace.indexOf("~"));
}
