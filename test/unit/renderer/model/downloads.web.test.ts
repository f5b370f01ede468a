import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LibraryModel, ModelDownload } from "../../../../contract/models.js";
import { DOWNLOAD_POLL_MS, ModelController } from "../../../../renderer/model/ModelController.js";
import {
    downloadName,
    downloadPercent,
    downloadStatusText,
    formatSpeed,
    libraryName,
    libraryRows,
    shortFingerprint
} from "../../../../renderer/model/modelText.js";
import { RpcError } from "../../../../renderer/rpc/RpcError.js";
import { createEngineStore } from "../../../../renderer/stores/engineStore.js";
import { createModelStore } from "../../../../renderer/stores/modelStore.js";
import { createTurnStore } from "../../../../renderer/stores/turnStore.js";
import { FakeRpc } from "../FakeRpc.js";

const running: ModelDownload = {
    id: "d1",
    source: "hf:owner/repo:Q4_K_M",
    path: "/data/models/hf_owner_repo.Q4_K_M.gguf",
    state: "downloading",
    downloadedBytes: 250_000_000,
    totalBytes: 1_000_000_000,
    bytesPerSecond: 12_345_678,
    error: undefined,
    resumable: false,
    keptBytes: 0,
    notice: undefined
};

function setup(): { rpc: FakeRpc; controller: ModelController; model: ReturnType<typeof createModelStore> } {
    const rpc = new FakeRpc();
    const model = createModelStore();
    return { rpc, model, controller: new ModelController(rpc, { model, engine: createEngineStore(), turns: createTurnStore() }) };
}

describe("download text", () => {
    it("shows percent, sizes and speed while running", () => {
        expect(downloadPercent(running)).toBe(25);
        expect(formatSpeed(running.bytesPerSecond)).toBe("12.3 MB/s");
        expect(formatSpeed(0)).toBe("0 MB/s");
        expect(formatSpeed(1_500_000)).toBe("1.50 MB/s");
        expect(downloadStatusText(running)).toBe("25% · 238 MiB of 954 MiB · 12.3 MB/s");
        expect(downloadName(running)).toBe("hf_owner_repo.Q4_K_M.gguf");
    });

    it("an unknown size, and the finished states", () => {
        const starting = { ...running, path: "", totalBytes: 0, downloadedBytes: 0, bytesPerSecond: 0 };
        expect(downloadPercent(starting)).toBeUndefined();
        expect(downloadName(starting)).toBe("hf:owner/repo:Q4_K_M");
        expect(downloadStatusText(starting)).toBe("Starting · 0 bytes · 0 MB/s");
        expect(downloadStatusText({ ...running, state: "done", downloadedBytes: 1_000_000_000 })).toBe("Done · 954 MiB");
        expect(downloadStatusText({ ...running, state: "cancelled" })).toMatch(/^Cancelled/);
        expect(
            downloadStatusText({ ...running, state: "failed", error: { code: "model_not_gguf", message: "x is not a GGUF file." } })
        ).toBe("Failed (model_not_gguf): x is not a GGUF file.");
        expect(downloadName({ ...running, path: "C:\\models\\m.gguf" })).toBe("m.gguf");
    });
});

describe("ModelController downloads", () => {
    beforeEach(() => {
        vi.useFakeTimers();
    });
    afterEach(() => {
        vi.useRealTimers();
    });

    it("starts a trimmed source, then polls listDownloads about twice a second until none runs", async () => {
        const { rpc, controller, model } = setup();
        rpc.answers.startDownload = ({ source }) => ({ ...running, source, downloadedBytes: 0 });
        let listed: ModelDownload[] = [running];
        rpc.answers.listDownloads = () => listed;
        expect(await controller.startDownload("  hf:owner/repo:Q4_K_M ")).toBe(true);
        expect(rpc.calls).toEqual([{ method: "startDownload", params: { source: "hf:owner/repo:Q4_K_M" } }]);
        expect(model.getState().downloads).toMatchObject([{ id: "d1", downloadedBytes: 0 }]);
        expect(DOWNLOAD_POLL_MS).toBeLessThanOrEqual(500);
        await vi.advanceTimersByTimeAsync(DOWNLOAD_POLL_MS);
        expect(model.getState().downloads).toEqual([running]);
        listed = [{ ...running, state: "done", downloadedBytes: running.totalBytes }];
        await vi.advanceTimersByTimeAsync(DOWNLOAD_POLL_MS);
        expect(model.getState().downloads[0]!.state).toBe("done");
        await vi.advanceTimersByTimeAsync(DOWNLOAD_POLL_MS * 10);
        expect(rpc.calls.filter((call) => call.method === "listDownloads")).toHaveLength(2);
    });

    it("keeps a refused source's code, and asks for a source instead of sending an empty one", async () => {
        const { rpc, controller, model } = setup();
        expect(await controller.startDownload("   ")).toBe(false);
        expect(rpc.calls).toEqual([]);
        expect(model.getState().download.error?.code).toBe("invalid_request");
        rpc.answers.startDownload = () => {
            throw new RpcError("download_source_invalid", "Downloads use http://, https:// or hf:, not file://.");
        };
        expect(await controller.startDownload("file:///etc/passwd")).toBe(false);
        expect(model.getState().download).toEqual({
            starting: false,
            error: { code: "download_source_invalid", message: "Downloads use http://, https:// or hf:, not file://." }
        });
        await vi.advanceTimersByTimeAsync(DOWNLOAD_POLL_MS * 4);
        expect(rpc.calls.map((call) => call.method)).toEqual(["startDownload"]);
    });

    it("cancels by id and shows the cancelled record", async () => {
        const { rpc, controller, model } = setup();
        rpc.answers.listDownloads = () => [running];
        await controller.refreshDownloads();
        rpc.answers.cancelDownload = ({ id }) => ({ ...running, id, state: "cancelled", bytesPerSecond: 0 });
        await controller.cancelDownload("d1");
        expect(rpc.calls.at(-1)).toEqual({ method: "cancelDownload", params: { id: "d1" } });
        expect(model.getState().downloads).toMatchObject([{ id: "d1", state: "cancelled" }]);
        controller.stopPolling();
        await vi.advanceTimersByTimeAsync(DOWNLOAD_POLL_MS * 4);
        expect(rpc.calls.map((call) => call.method)).toEqual(["listDownloads", "cancelDownload"]);
    });

    it("loads a finished download by its path", async () => {
        const { rpc, controller } = setup();
        rpc.answers.switchModel = ({ model }) => ({ modelName: model }) as never;
        expect(await controller.load(running.path)).toBe(true);
        expect(rpc.calls).toEqual([{ method: "switchModel", params: { model: running.path } }]);
    });
});

describe("resuming downloads and the model library", () => {
    const stopped: ModelDownload = {
        ...running,
        state: "failed",
        downloadedBytes: 7_340_032,
        totalBytes: 12_133_504,
        bytesPerSecond: 0,
        resumable: true,
        keptBytes: 5_242_880,
        error: {
            code: "download_interrupted",
            message: "The download of m.gguf stopped: no data arrived for 60 s. 5,242,880 bytes are kept; Resume continues from there."
        }
    };
    const model: LibraryModel = {
        id: "m1",
        path: "/data/models/m.gguf",
        fileName: "m.gguf",
        origin: "downloaded",
        source: "https://example.com/m.gguf",
        name: "Kvault synthetic tiny",
        architecture: "llama",
        parameterCount: 1_100_000,
        fileType: "MOSTLY_F16",
        trainContextSize: 4096,
        numLayers: 2,
        kvBytesPerToken: 1024,
        fileBytes: 867_584,
        fingerprint: "0123456789abcdef",
        addedAt: "2026-01-05T10:00:00.000Z",
        lastUsedAt: "2026-01-05T10:00:00.000Z",
        missing: false
    };

    beforeEach(() => {
        vi.useFakeTimers();
    });
    afterEach(() => {
        vi.useRealTimers();
    });

    it("a stopped download says where it stopped and what is kept", () => {
        expect(downloadStatusText(stopped)).toBe(
            "Stopped at 7.00 MiB of 11.6 MiB, 5.00 MiB kept (download_interrupted): The download of m.gguf stopped: no data arrived for 60 s. 5,242,880 bytes are kept; Resume continues from there."
        );
    });

    it("Resume sends the id, shows the running record and polls until it ends; the library is listed again when it finishes", async () => {
        const { rpc, controller, model: store } = setup();
        rpc.answers.listDownloads = () => [stopped];
        await controller.refreshDownloads();
        rpc.answers.resumeDownload = ({ id }) => ({
            ...stopped,
            id,
            state: "downloading",
            resumable: false,
            keptBytes: 0,
            error: undefined
        });
        await controller.resumeDownload("d1");
        expect(store.getState().downloads).toMatchObject([{ id: "d1", state: "downloading" }]);
        rpc.answers.listDownloads = () => [{ ...stopped, state: "done", resumable: false, keptBytes: 0, error: undefined }];
        rpc.answers.listModels = () => ({ models: [model], problems: [] });
        await vi.advanceTimersByTimeAsync(DOWNLOAD_POLL_MS);
        expect(rpc.calls.map((call) => call.method)).toEqual(["listDownloads", "resumeDownload", "listDownloads", "listModels"]);
        expect(store.getState().library.models).toEqual([model]);
    });

    it("a refused resume is kept with its code", async () => {
        const { rpc, controller, model: store } = setup();
        rpc.answers.resumeDownload = () => {
            throw new RpcError("download_not_resumable", "The download of m.gguf cannot be resumed: it finished.");
        };
        await controller.resumeDownload("d1");
        expect(store.getState().download.error).toEqual({
            code: "download_not_resumable",
            message: "The download of m.gguf cannot be resumed: it finished."
        });
    });

    it("lists and forgets library entries, keeping a refusal's code", async () => {
        const { rpc, controller, model: store } = setup();
        rpc.answers.listModels = () => ({
            models: [model],
            problems: [{ code: "library_corrupt", message: "models.json was damaged.", copy: "/data/models.json.corrupt-1" }]
        });
        await controller.refreshLibrary();
        expect(store.getState().library).toEqual({
            models: [model],
            problems: [{ code: "library_corrupt", message: "models.json was damaged.", copy: "/data/models.json.corrupt-1" }]
        });
        rpc.answers.forgetModel = () => ({ models: [], problems: [] });
        await controller.forgetModel("m1");
        expect(rpc.calls.at(-1)).toEqual({ method: "forgetModel", params: { id: "m1" } });
        expect(store.getState().library.models).toEqual([]);
        rpc.answers.forgetModel = () => {
            throw new RpcError(
                "library_model_in_use",
                "m.gguf is the model the engine runs now; load another model first, then delete it."
            );
        };
        await controller.forgetModel("m1", true);
        expect(rpc.calls.at(-1)).toEqual({ method: "forgetModel", params: { id: "m1", deleteFile: true } });
        expect(store.getState().library.error?.code).toBe("library_model_in_use");
    });

    it("shows an entry's facts with a short fingerprint", () => {
        expect(libraryName(model)).toBe("Kvault synthetic tiny");
        expect(libraryName({ ...model, name: undefined })).toBe("m.gguf");
        expect(shortFingerprint(model.fingerprint)).toBe("01234567");
        expect(libraryRows(model).map((row) => `${row.label}: ${row.value}`)).toEqual([
            "Architecture: llama",
            "Parameters: 1.1 M",
            "Quantisation: MOSTLY_F16",
            "Trained context: 4,096 tokens",
            "KV per token: 1.00 KiB",
            "Size: 847 KiB",
            "Fingerprint: 01234567"
        ]);
        expect(
            libraryRows({ ...model, parameterCount: undefined, fileType: undefined, trainContextSize: undefined })
                .map((row) => row.value)
                .slice(1, 4)
        ).toEqual(["not stated", "not stated", "not stated"]);
    });
});
