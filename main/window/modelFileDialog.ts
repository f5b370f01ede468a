// Pure on purpose (electron's types only): the native dialog that opens a GGUF file. The caller
// passes Electron's dialog.showOpenDialog (bound to the window, so it is a sheet on macOS); the
// options and the reading of the answer are tested alone.
import path from "node:path";
import type { OpenDialogOptions, OpenDialogReturnValue } from "electron";

export type ShowOpenDialog = (options: OpenDialogOptions) => Promise<Pick<OpenDialogReturnValue, "canceled" | "filePaths">>;

export type ModelFileChoice = { readonly kind: "chosen"; readonly path: string } | { readonly kind: "canceled" };

/** One file, GGUF first (All Files for a model saved under another name), opening where the last model was. */
export function modelFileDialogOptions(startIn: string | undefined): OpenDialogOptions {
    return {
        title: "Open a GGUF model",
        buttonLabel: "Open",
        properties: ["openFile"],
        filters: [
            { name: "GGUF models", extensions: ["gguf"] },
            { name: "All Files", extensions: ["*"] }
        ],
        ...(startIn === undefined ? {} : { defaultPath: startIn })
    };
}

/** The answer as a value: the one absolute path chosen, or canceled (Cancel, Escape, or nothing usable). */
export function readModelFileChoice(result: Pick<OpenDialogReturnValue, "canceled" | "filePaths">): ModelFileChoice {
    const [chosen] = result.filePaths;
    if (result.canceled || result.filePaths.length !== 1 || chosen === undefined || !path.isAbsolute(chosen)) {
        return { kind: "canceled" };
    }
    return { kind: "chosen", path: chosen };
}

/**
 * Asks the user for a GGUF file. `lastModelPath` (the settings' modelPath) picks the folder it
 * opens in. The file is not read here: the engine's inspectModel says whether it is a usable GGUF.
 */
export async function chooseModelFile(showOpenDialog: ShowOpenDialog, lastModelPath: string | null): Promise<ModelFileChoice> {
    return readModelFileChoice(
        await showOpenDialog(modelFileDialogOptions(lastModelPath === null ? undefined : path.dirname(lastModelPath)))
    );
}
