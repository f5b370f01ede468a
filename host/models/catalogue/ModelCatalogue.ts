import os from "node:os";
import {
    fitVerdict,
    kvBytesPerToken,
    type CatalogueModelView,
    type MachineMemory,
    type ModelCatalogueView,
    type ModelSearchResult,
    type RepoFilesResult
} from "../../../contract/modelCatalogue.js";
import type { LibraryModel } from "../../../contract/models.js";
import type { ResourceUse } from "../../../contract/resourceUse.js";
import { catalogueEntries, catalogueSource, type CatalogueEntry } from "./catalogueEntries.js";
import type { HuggingFaceClient } from "./HuggingFaceClient.js";

export interface ModelCatalogueParts {
    readonly huggingFace: HuggingFaceClient;
    /** The engine's resource use (its VRAM); rejects when there is no engine to ask. */
    readonly resourceUse: () => Promise<ResourceUse>;
    /** The model library's entries: a catalogue file already there is judged by its own header's numbers. */
    readonly libraryModels: () => Promise<readonly LibraryModel[]>;
    /** Free and total RAM of this machine; os.freemem and os.totalmem unless a test says otherwise. */
    readonly ram?: () => { freeBytes: number; totalBytes: number };
    readonly entries?: readonly CatalogueEntry[];
}

/**
 * The model manager's catalogue and Hugging Face search (rpcSpec modelCatalogue, searchModels,
 * modelRepoFiles): every file with a "fits this machine" verdict from contract/modelCatalogue.ts
 * fitVerdict over the machine's free RAM (os.freemem) and the engine's free VRAM.
 */
export class ModelCatalogue {
    readonly #entries: readonly CatalogueEntry[];

    constructor(private readonly parts: ModelCatalogueParts) {
        this.#entries = parts.entries ?? catalogueEntries;
    }

    /** What the verdicts are computed against, now; `vramNote` says why no VRAM is counted, when none is. */
    async machine(): Promise<{ machine: MachineMemory; vramNote?: string }> {
        const ram = this.parts.ram?.() ?? { freeBytes: os.freemem(), totalBytes: os.totalmem() };
        const base = { freeRamBytes: ram.freeBytes, totalRamBytes: ram.totalBytes };
        try {
            const { vram } = await this.parts.resourceUse();
            if (vram === undefined) {
                return { machine: base, vramNote: "The engine runs on the CPU: no VRAM is counted." };
            }
            return {
                machine: { ...base, vram: { freeBytes: Math.max(0, vram.totalBytes - vram.usedBytes), totalBytes: vram.totalBytes } }
            };
        } catch (error) {
            return { machine: base, vramNote: `The engine did not say its VRAM (${(error as Error).message}): only RAM is counted.` };
        }
    }

    async view(contextSize: number): Promise<ModelCatalogueView> {
        const { machine, vramNote } = await this.machine();
        const library = await this.parts.libraryModels().catch(() => [] as readonly LibraryModel[]);
        const byFileName = new Map(library.filter((model) => !model.missing).map((model) => [model.fileName, model]));
        const models = this.#entries.map((entry): CatalogueModelView => {
            const catalogueKv = kvBytesPerToken(entry.architecture);
            return {
                id: entry.id,
                name: entry.name,
                family: entry.family,
                parameters: entry.parameters,
                repo: entry.repo,
                architecture: entry.architecture,
                files: entry.files.map((file) => {
                    const local = byFileName.get(file.fileName);
                    const fit =
                        local === undefined
                            ? fitVerdict({
                                  weightsBytes: file.sizeBytes,
                                  kvBytesPerToken: catalogueKv,
                                  contextSize,
                                  basis: "catalogue",
                                  machine
                              })
                            : fitVerdict({
                                  weightsBytes: local.fileBytes,
                                  kvBytesPerToken: local.kvBytesPerToken,
                                  contextSize,
                                  basis: "header",
                                  machine
                              });
                    return { ...file, downloadSource: this.parts.huggingFace.resolveUrl(entry.repo, file.fileName), fit };
                })
            };
        });
        return { ...catalogueSource, contextSize, machine, ...(vramNote === undefined ? {} : { vramNote }), models };
    }

    async search(query: string): Promise<ModelSearchResult> {
        const found = await this.parts.huggingFace.search(query);
        return found.kind === "offline" ? found : { kind: "online", query, hits: found.value };
    }

    async repoFiles(repo: string): Promise<RepoFilesResult> {
        const found = await this.parts.huggingFace.repoFiles(repo);
        if (found.kind === "offline") {
            return found;
        }
        const { machine } = await this.machine();
        return {
            kind: "online",
            repo,
            machine,
            files: found.value.map((file) => ({
                fileName: file.path,
                sizeBytes: file.sizeBytes,
                downloadSource: this.parts.huggingFace.resolveUrl(repo, file.path),
                fit: fitVerdict({ weightsBytes: file.sizeBytes, kvBytesPerToken: 0, contextSize: 0, basis: "size", machine })
            }))
        };
    }
}
