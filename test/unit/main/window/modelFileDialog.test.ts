// Opening a GGUF through the native dialog: what it asks for, and how its answer is read.
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { modelFileDialogOptions } from "../../../../main/window/modelFileDialog.js";
import { chooseModelFile, readModelFileChoice } from "../../../../main/window/modelFileDialog.js";

type OpenDialogOptions = ReturnType<typeof modelFileDialogOptions>;

const models = path.resolve("/home/ada/models");

describe("chooseModelFile", () => {
    it("asks for one file, GGUF first, in the folder of the model loaded last", async () => {
        const asked: OpenDialogOptions[] = [];
        const choice = await chooseModelFile(
            async (options) => (asked.push(options), { canceled: false, filePaths: [path.join(models, "qwen.gguf")] }),
            path.join(models, "llama.gguf")
        );
        expect(choice).toEqual({ kind: "chosen", path: path.join(models, "qwen.gguf") });
        expect(asked).toEqual([
            {
                title: "Open a GGUF model",
                buttonLabel: "Open",
                properties: ["openFile"],
                filters: [
                    { name: "GGUF models", extensions: ["gguf"] },
                    { name: "All Files", extensions: ["*"] }
                ],
                defaultPath: models
            }
        ]);
    });

    it("opens wherever the system likes with the demo model loaded", async () => {
        const asked: OpenDialogOptions[] = [];
        await chooseModelFile(async (options) => (asked.push(options), { canceled: true, filePaths: [] }), null);
        expect(asked[0]).not.toHaveProperty("defaultPath");
    });
});

describe("readModelFileChoice", () => {
    it("is canceled for Cancel, nothing, several files or a relative path", () => {
        expect(readModelFileChoice({ canceled: true, filePaths: [path.join(models, "a.gguf")] })).toEqual({ kind: "canceled" });
        expect(readModelFileChoice({ canceled: false, filePaths: [] })).toEqual({ kind: "canceled" });
        expect(readModelFileChoice({ canceled: false, filePaths: [path.join(models, "a.gguf"), path.join(models, "b.gguf")] })).toEqual({
            kind: "canceled"
        });
        expect(readModelFileChoice({ canceled: false, filePaths: ["a.gguf"] })).toEqual({ kind: "canceled" });
    });
});
