import type { ModelCatalogueView } from "../../contract/modelCatalogue.js";
import type { CatalogueChoice } from "./demoModelSelectors.js";

/** How many of the catalogue's files the welcome offers: enough to choose, few enough to read at a glance. */
export const MAX_WELCOME_CHOICES = 4;

/** The catalogue's files whose verdict says they fit this machine, smallest first, one per model, at most `limit`. */
export function fittingFiles(view: Pick<ModelCatalogueView, "models">, limit: number): CatalogueChoice[] {
    const choices: CatalogueChoice[] = [];
    for (const model of view.models) {
        const fitting = model.files.filter((file) => file.fit.kind !== "tooBig");
        const smallest = fitting.reduce<(typeof fitting)[number] | undefined>(
            (best, file) => (best === undefined || file.sizeBytes < best.sizeBytes ? file : best),
            undefined
        );
        if (smallest !== undefined) {
            choices.push({ model, file: smallest });
        }
    }
    return choices.sort((left, right) => left.file.sizeBytes - right.file.sizeBytes).slice(0, limit);
}
