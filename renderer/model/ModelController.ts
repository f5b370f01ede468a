import { DEMO_MODEL, type ModelDownload } from "../../contract/models.js";
import type { KvaultRpc } from "../rpc/KvaultRpc.js";
import { toRpcError } from "../rpc/RpcError.js";
import type { createEngineStore } from "../stores/engineStore.js";
import type { ModelFailure, ModelStore } from "../stores/modelStore.js";
import type { createTurnStore } from "../stores/turnStore.js";

export interface ModelControllerStores {
    readonly model: ModelStore;
    /** Gets the new engine's info after a switch. */
    readonly engine: ReturnType<typeof createEngineStore>;
    /** Read only: how many turns a switch would end. */
    readonly turns: ReturnType<typeof createTurnStore>;
}

/**
 * The model manager's actions: inspect a GGUF path on the machine running Kvault (facts and a
 * memory estimate, nothing loaded), and load another model or the built-in demo one. Answers go
 * to the model store; failures are kept there with the host's code, never thrown.
 */
export class ModelController {
    /** The next listDownloads while a download runs. */
    #poll: ReturnType<typeof setTimeout> | undefined;

    constructor(
        private readonly rpc: KvaultRpc,
        private readonly stores: ModelControllerStores
    ) {}

    /** Turns running now in any workspace; a switch ends them with model_switched. */
    numRunningTurns(): number {
        return Object.keys(this.stores.turns.getState().live).length;
    }

    /** Reads the file's header; the last inspection's facts stay until the next answer. */
    async inspect(untrimmedPath: string): Promise<void> {
        const path = untrimmedPath.trim();
        const store = this.stores.model;
        if (path === "") {
            store.setState({
                inspection: {
                    running: false,
                    error: {
                        code: "invalid_request",
                        message: "Type the full path of a .gguf file on the machine running Kvault, then Inspect."
                    }
                }
            });
            return;
        }
        store.setState({ inspection: { running: true, path } });
        try {
            const facts = await this.rpc.call("inspectModel", { path });
            if (store.getState().inspection.path === path) {
                store.setState({ inspection: { running: false, path, facts } });
            }
        } catch (error) {
            if (store.getState().inspection.path === path) {
                store.setState({ inspection: { running: false, path, error: failure(error) } });
            }
        }
    }

    /** Loads the model at `path` (or the demo model); once at a time. Resolves true when the engine runs it. */
    async load(model: string): Promise<boolean> {
        const store = this.stores.model;
        const name = model.trim();
        if (store.getState().loading.running) {
            return false;
        }
        if (name === "") {
            store.setState({
                loading: {
                    running: false,
                    error: { code: "invalid_request", message: "Type the full path of a .gguf file, or use the built-in demo model." }
                }
            });
            return false;
        }
        store.setState({ loading: { running: true, model: name } });
        try {
            const info = await this.rpc.call("switchModel", { model: name });
            this.stores.engine.setState({ info, infoError: undefined });
            store.setState({ loading: { running: false } });
            return true;
        } catch (error) {
            store.setState({ loading: { running: false, model: name, error: failure(error) } });
            return false;
        }
    }

    loadDemo(): Promise<boolean> {
        return this.load(DEMO_MODEL);
    }

    /** Asks the host to download `source` (an http(s) URL or an hf: reference); the list is polled while it runs. */
    async startDownload(untrimmedSource: string): Promise<boolean> {
        const source = untrimmedSource.trim();
        const store = this.stores.model;
        if (store.getState().download.starting) {
            return false;
        }
        if (source === "") {
            store.setState({
                download: {
                    starting: false,
                    error: {
                        code: "invalid_request",
                        message: "Type a model URL (https://…) or a Hugging Face reference (hf:owner/repo:quant), then Download."
                    }
                }
            });
            return false;
        }
        store.setState({ download: { starting: true } });
        try {
            const record = await this.rpc.call("startDownload", { source });
            store.setState((state) => ({ download: { starting: false }, downloads: upsert(state.downloads, record) }));
            this.#schedulePoll();
            return true;
        } catch (error) {
            store.setState({ download: { starting: false, error: failure(error) } });
            return false;
        }
    }

    /** Cancels a running download; the host deletes its partial file. */
    async cancelDownload(id: string): Promise<void> {
        const store = this.stores.model;
        try {
            const record = await this.rpc.call("cancelDownload", { id });
            store.setState((state) => ({ downloads: upsert(state.downloads, record) }));
        } catch (error) {
            store.setState((state) => ({ download: { starting: state.download.starting, error: failure(error) } }));
        }
    }

    /** Continues a failed download from its partial file; the list is polled while it runs. */
    async resumeDownload(id: string): Promise<void> {
        const store = this.stores.model;
        try {
            const record = await this.rpc.call("resumeDownload", { id });
            store.setState((state) => ({ download: { starting: state.download.starting }, downloads: upsert(state.downloads, record) }));
            this.#schedulePoll();
        } catch (error) {
            store.setState((state) => ({ download: { starting: state.download.starting, error: failure(error) } }));
        }
    }

    /** Lists the host's downloads; while any runs, lists again every DOWNLOAD_POLL_MS. A download that finished since is in the library: it is listed again. */
    async refreshDownloads(): Promise<void> {
        const store = this.stores.model;
        const before = store.getState().downloads;
        try {
            const downloads = await this.rpc.call("listDownloads", {});
            store.setState({ downloads });
            if (
                downloads.some(
                    (download) => download.state === "done" && before.find((known) => known.id === download.id)?.state !== "done"
                )
            ) {
                void this.refreshLibrary();
            }
        } catch (error) {
            store.setState((state) => ({ download: { starting: state.download.starting, error: failure(error) } }));
            return;
        }
        if (store.getState().downloads.some((download) => download.state === "downloading")) {
            this.#schedulePoll();
        }
    }

    /** Lists the host's model library. */
    async refreshLibrary(): Promise<void> {
        const store = this.stores.model;
        try {
            const { models, problems } = await this.rpc.call("listModels", {});
            store.setState({ library: { models, problems } });
        } catch (error) {
            store.setState((state) => ({ library: { ...state.library, error: failure(error) } }));
        }
    }

    /** Removes a library entry; the file stays unless `deleteFile` (a downloaded model's only; the host refuses the rest). */
    async forgetModel(id: string, deleteFile = false): Promise<void> {
        const store = this.stores.model;
        try {
            const { models, problems } = await this.rpc.call("forgetModel", deleteFile ? { id, deleteFile } : { id });
            store.setState({ library: { models, problems } });
        } catch (error) {
            store.setState((state) => ({ library: { ...state.library, error: failure(error) } }));
        }
    }

    /** Stops polling; for the page's teardown and tests. */
    stopPolling(): void {
        clearTimeout(this.#poll);
        this.#poll = undefined;
    }

    #schedulePoll(): void {
        if (this.#poll !== undefined) {
            return;
        }
        this.#poll = setTimeout(() => {
            this.#poll = undefined;
            void this.refreshDownloads();
        }, DOWNLOAD_POLL_MS);
    }
}

/** About twice a second while a download runs. */
export const DOWNLOAD_POLL_MS = 500;

function upsert(downloads: readonly ModelDownload[], record: ModelDownload): readonly ModelDownload[] {
    return downloads.some((download) => download.id === record.id)
        ? downloads.map((download) => (download.id === record.id ? record : download))
        : [...downloads, record];
}

function failure(error: unknown): ModelFailure {
    const { code, message } = toRpcError(error);
    return { code, message };
}
