// What a workspace's model picker offers: the host's own model first, then the models found on disk, each said loaded or not.
import { describe, expect, it } from "vitest";
import type { DiskModel } from "../../../../host/models/findModelsOnDisk.js";
import { listLocalModels } from "../../../../host/models/listLocalModels.js";
import type { LoadedModel } from "../../../../host/supervisor/EnginePool.js";

const found = (id: string, source: DiskModel["source"]): DiskModel => ({ id, path: `/models/${id}.gguf`, source }) as DiskModel;
const loaded = (id: string, primary: boolean, source = primary ? "own" : "folder"): LoadedModel => ({ id, primary, source }) as LoadedModel;

describe("listLocalModels", () => {
    it("lists the host's own model first, then each found model once, said loaded when the pool holds it", async () => {
        const list = await listLocalModels({
            loaded: async () => [loaded("tiny", true), loaded("small-local", false)],
            available: async () => [found("tiny", "folder"), found("small-local", "folder"), found("qwen3:0.6b", "ollama")]
        });
        expect(list).toEqual({
            several: true,
            models: [
                { id: "tiny", source: "own", loaded: true },
                { id: "small-local", source: "folder", loaded: true },
                { id: "qwen3:0.6b", source: "ollama", loaded: false }
            ]
        });
    });

    it("with loadedOnly lists the loaded models alone and never asks for the models on disk (a rescan of the folders)", async () => {
        let numScans = 0;
        const list = await listLocalModels(
            {
                loaded: async () => [loaded("tiny", true), loaded("qwen3:0.6b", false, "ollama")],
                available: async () => {
                    numScans++;
                    return [found("qwen3:0.6b", "ollama"), found("small-local", "folder")];
                }
            },
            true
        );
        expect(list).toEqual({
            several: true,
            models: [
                { id: "tiny", source: "own", loaded: true },
                { id: "qwen3:0.6b", source: "ollama", loaded: true }
            ]
        });
        expect(numScans).toBe(0);
    });

    it("offers nothing to choose where the host runs one model", async () => {
        expect(await listLocalModels(undefined)).toEqual({ several: false, models: [] });
    });
});
