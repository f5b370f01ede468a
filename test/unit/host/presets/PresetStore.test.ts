import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { presetExport } from "../../../../contract/presets.js";
import { PresetStore } from "../../../../host/presets/PresetStore.js";
import { shippedPresets } from "../../../../host/presets/shippedPresets.js";

let directory: string;
beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-presets-"));
});
afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

const file = (): string => path.join(directory, "presets.json");

/** An LM Studio preset file as its app writes one (config-presets/*.preset.json). */
const lmStudioPreset = {
    identifier: "@local:terse-coder",
    name: "Terse coder",
    changed: true,
    operation: {
        fields: [
            { key: "llm.prediction.systemPrompt", value: "Answer with code only." },
            { key: "llm.prediction.temperature", value: 0.3 },
            { key: "llm.prediction.topKSampling", value: 30 },
            { key: "llm.prediction.topPSampling", value: { checked: true, value: 0.9 } },
            { key: "llm.prediction.minPSampling", value: { checked: false, value: 0.05 } },
            { key: "llm.prediction.repeatPenalty", value: { checked: true, value: 1.15 } },
            { key: "llm.prediction.maxPredictedTokens", value: { checked: true, value: 700 } },
            { key: "llm.prediction.llama.cpuThreads", value: 8 },
            { key: "llm.prediction.promptTemplate", value: { type: "jinja" } }
        ]
    },
    load: { fields: [{ key: "llm.load.contextLength", value: 8192 }] }
};

describe("PresetStore: named settings in the data directory", () => {
    it("starts with the shipped presets, and keeps a saved, edited and deleted preset across a reopen", async () => {
        const store = await PresetStore.open(directory);
        expect(store.list().presets.map((preset) => preset.name)).toEqual(shippedPresets.map((preset) => preset.name));
        expect(fs.existsSync(file())).toBe(false);

        const mine = { id: "ui-mine", name: "Mine", settings: { systemPrompt: "Be brief.", temperature: 0.4, maxTokens: 300, topK: 12 } };
        await store.save(mine);
        await store.save({ ...mine, name: "Mine, edited", settings: { ...mine.settings, temperature: 0.5 } });
        expect((await store.remove("shipped-writer")).deleted).toBe(true);
        expect((await store.remove("shipped-writer")).deleted).toBe(false);

        const reopened = await PresetStore.open(directory);
        const presets = reopened.list().presets;
        expect(presets).toHaveLength(shippedPresets.length);
        expect(presets.at(-1)).toEqual({ ...mine, name: "Mine, edited", settings: { ...mine.settings, temperature: 0.5 } });
        expect(presets.some((preset) => preset.id === "shipped-writer")).toBe(false);
    });

    it("refuses a damaged presets file with preset_file_invalid, naming the file and the field, and leaves it as it was", async () => {
        const damaged = JSON.stringify({
            v: 1,
            presets: [{ id: "ui-x", name: "X", settings: { systemPrompt: "", temperature: 9, maxTokens: 5 } }]
        });
        fs.writeFileSync(file(), damaged);
        const opening = PresetStore.open(directory);
        await expect(opening).rejects.toMatchObject({ code: "preset_file_invalid" });
        await expect(opening).rejects.toThrow(
            /presets\.json cannot be read: presets\[0\]: settings\.temperature 9 is not a number from 0 to 2/
        );
        expect(fs.readFileSync(file(), "utf8")).toBe(damaged);

        fs.writeFileSync(file(), "{ not json");
        await expect(PresetStore.open(directory)).rejects.toThrow(/it is not JSON/);
    });

    it("imports an LM Studio preset file, mapping its prediction fields and naming every field it did not map", async () => {
        const store = await PresetStore.open(directory);
        const result = await store.import(JSON.stringify(lmStudioPreset), "terse-coder.preset.json");
        expect(result.imported).toHaveLength(1);
        expect(result.imported[0]!.name).toBe("Terse coder");
        expect(result.imported[0]!.settings).toEqual({
            systemPrompt: "Answer with code only.",
            temperature: 0.3,
            maxTokens: 700,
            topK: 30,
            topP: 0.9,
            repeatPenalty: 1.15
        });
        expect(result.unmapped).toEqual(["llm.prediction.llama.cpuThreads", "llm.prediction.promptTemplate", "llm.load.contextLength"]);
        expect(result.presets.at(-1)).toEqual(result.imported[0]);
    });

    it("imports its own export back under new ids, and refuses a bad file with preset_import_invalid, importing nothing", async () => {
        const store = await PresetStore.open(directory);
        const exported = JSON.stringify(presetExport(shippedPresets.slice(0, 2)));
        const result = await store.import(exported, "kvault-presets.json");
        expect(result.imported.map((preset) => [preset.name, preset.settings])).toEqual(
            shippedPresets.slice(0, 2).map((preset) => [preset.name, preset.settings])
        );
        expect(result.imported.every((preset) => !shippedPresets.some((shipped) => shipped.id === preset.id))).toBe(true);
        const count = store.list().presets.length;

        const bad = { ...lmStudioPreset, operation: { fields: [{ key: "llm.prediction.temperature", value: 7 }] } };
        await expect(store.import(JSON.stringify(bad), "hot.preset.json")).rejects.toMatchObject({ code: "preset_import_invalid" });
        await expect(store.import(JSON.stringify(bad), "hot.preset.json")).rejects.toThrow(
            /settings\.temperature 7 is not a number from 0 to 2/
        );
        await expect(store.import('{"hello":1}', "other.json")).rejects.toThrow(
            /neither a Kvault preset export .* nor an LM Studio preset/
        );
        expect(store.list().presets).toHaveLength(count);
    });
});
