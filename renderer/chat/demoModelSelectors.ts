import type { CatalogueFileView, CatalogueModelView, ModelCatalogueView } from "../../contract/modelCatalogue.js";
import type { EngineInfo } from "../../contract/engineProtocol.js";

/**
 * The `general.name` Kvault's generator writes into the built-in demo model ("Kvault synthetic "
 * and the preset's name): the engine reports it as the model's name, whatever the file is called.
 */
export const DEMO_MODEL_NAME = "Kvault synthetic tiny";

/** True while the engine runs the built-in demo model, whose random weights write noise. */
export function isDemoModel(info: Pick<EngineInfo, "modelName"> | undefined): boolean {
    return info?.modelName === DEMO_MODEL_NAME;
}

/** A catalogue file with the model it belongs to. */
export interface CatalogueChoice {
    readonly model: CatalogueModelView;
    readonly file: CatalogueFileView;
}

/** The catalogue's smallest file (by bytes) whose verdict says it fits this machine; undefined when none fits. */
export function smallestFittingFile(view: Pick<ModelCatalogueView, "models">): CatalogueChoice | undefined {
    let best: CatalogueChoice | undefined;
    for (const model of view.models) {
        for (const file of model.files) {
            if (file.fit.kind !== "tooBig" && (best === undefined || file.sizeBytes < best.file.sizeBytes)) {
                best = { model, file };
            }
        }
    }
    return best;
}
