import type { ModelSearchHit } from "../../../contract/modelCatalogue.js";
import { KvaultError } from "../../../engine/index.js";

/** Hugging Face answered, but not with what its API answers (an error status, or a body of another shape). */
export class HuggingFaceAnswerError extends KvaultError {
    readonly code = "huggingface_bad_answer";
}

/** Hugging Face's public API, unless the host is told another (a mirror, or a test's loopback server). */
export const DEFAULT_HUGGING_FACE_URL = "https://huggingface.co";

/** The environment variable that names another base URL. */
export const HUGGING_FACE_URL_VARIABLE = "KVAULT_HUGGINGFACE_URL";

/** How long one request to Hugging Face may take before the host calls it offline, ms. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Hits one search asks for. */
const MAX_HITS = 30;
/** The largest answer read, bytes: a search or a repository's file list is tens of KiB. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export type Fetched<T> = { readonly kind: "online"; readonly value: T } | { readonly kind: "offline"; readonly message: string };

/** A GGUF file of a repository as Hugging Face lists it. */
export interface RepoFile {
    readonly path: string;
    readonly sizeBytes: number;
}

/**
 * Real HTTP to Hugging Face's public API (`/api/models?search=…&filter=gguf`, `/api/models/{repo}/tree/main`)
 * at `baseUrl`. Unreachable (no network, DNS, refused, timed out) is an expected outcome, `offline`;
 * an answer of the wrong shape is a HuggingFaceAnswerError with what was wrong.
 */
export class HuggingFaceClient {
    constructor(readonly baseUrl: string = DEFAULT_HUGGING_FACE_URL) {}

    /** The URL startDownload takes for a file of a repository (at `branch`, main by default). */
    resolveUrl(repo: string, path: string, branch = "main"): string {
        return `${this.baseUrl.replace(/\/+$/, "")}/${repo}/resolve/${encodeURIComponent(branch)}/${path.split("/").map(encodeURIComponent).join("/")}`;
    }

    async search(query: string): Promise<Fetched<ModelSearchHit[]>> {
        const url = this.#url(`/api/models?search=${encodeURIComponent(query)}&filter=gguf&sort=downloads&limit=${MAX_HITS}`);
        const answer = await this.#getJson(url);
        if (answer.kind === "offline") {
            return answer;
        }
        if (!Array.isArray(answer.value)) {
            throw new HuggingFaceAnswerError(
                `Hugging Face's search (${url}) answered ${describe(answer.value)}, not a list of models; try again later.`
            );
        }
        const hits = answer.value.slice(0, MAX_HITS).map((item: unknown, index): ModelSearchHit => {
            const record = item as { id?: unknown; downloads?: unknown; likes?: unknown } | null;
            if (record === null || typeof record !== "object" || typeof record.id !== "string" || !/^[\w.-]+\/[\w.-]+$/.test(record.id)) {
                throw new HuggingFaceAnswerError(
                    `Hugging Face's search answered a model ${index} without an owner/name id (${describe(item)}); try again later.`
                );
            }
            return { repo: record.id, downloads: count(record.downloads), likes: count(record.likes) };
        });
        return { kind: "online", value: hits };
    }

    /** The repository's .gguf files, from its file list at `main`. */
    async repoFiles(repo: string): Promise<Fetched<RepoFile[]>> {
        const url = this.#url(`/api/models/${repo}/tree/main`);
        const answer = await this.#getJson(url);
        if (answer.kind === "offline") {
            return answer;
        }
        if (!Array.isArray(answer.value)) {
            throw new HuggingFaceAnswerError(
                `Hugging Face's file list of ${repo} answered ${describe(answer.value)}, not a list of files; try again later.`
            );
        }
        const files: RepoFile[] = [];
        for (const item of answer.value as unknown[]) {
            const record = item as { type?: unknown; path?: unknown; size?: unknown; lfs?: { size?: unknown } } | null;
            if (record === null || typeof record !== "object" || record.type !== "file" || typeof record.path !== "string") {
                continue; // folders and other entries: not a model file
            }
            if (!record.path.toLowerCase().endsWith(".gguf")) {
                continue;
            }
            const size = record.lfs?.size ?? record.size;
            if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
                throw new HuggingFaceAnswerError(
                    `Hugging Face lists ${repo}'s ${record.path} with size ${describe(size)}, not a byte count; try again later.`
                );
            }
            files.push({ path: record.path, sizeBytes: size });
        }
        return { kind: "online", value: files };
    }

    #url(pathAndQuery: string): string {
        return `${this.baseUrl.replace(/\/+$/, "")}${pathAndQuery}`;
    }

    async #getJson(url: string): Promise<Fetched<unknown>> {
        let response: Response;
        try {
            response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), headers: { accept: "application/json" } });
        } catch (error) {
            const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
            return { kind: "offline", message: `offline: the catalogue only (${new URL(url).host} could not be reached: ${reason}).` };
        }
        if (!response.ok) {
            await response.body?.cancel();
            throw new HuggingFaceAnswerError(
                `Hugging Face answered ${response.status} ${response.statusText} for ${url}; try again later.`
            );
        }
        const declared = Number(response.headers.get("content-length") ?? 0);
        if (declared > MAX_ANSWER_BYTES) {
            await response.body?.cancel();
            throw new HuggingFaceAnswerError(
                `Hugging Face's answer for ${url} would be ${declared.toLocaleString("en-US")} bytes, more than ${MAX_ANSWER_BYTES.toLocaleString("en-US")}; try a narrower search.`
            );
        }
        const text = await response.text();
        if (text.length > MAX_ANSWER_BYTES) {
            throw new HuggingFaceAnswerError(
                `Hugging Face's answer for ${url} has ${text.length.toLocaleString("en-US")} characters, more than ${MAX_ANSWER_BYTES.toLocaleString("en-US")}; try a narrower search.`
            );
        }
        try {
            return { kind: "online", value: JSON.parse(text) as unknown };
        } catch {
            throw new HuggingFaceAnswerError(
                `Hugging Face's answer for ${url} is not JSON (it starts ${JSON.stringify(text.slice(0, 40))}); try again later.`
            );
        }
    }
}

function count(value: unknown): number {
    return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

function describe(value: unknown): string {
    return value === null
        ? "null"
        : Array.isArray(value)
          ? "a list"
          : typeof value === "object"
            ? "an object"
            : JSON.stringify(value).slice(0, 60);
}
