import { describe, expect, it } from "vitest";
import type { EngineSettings } from "../../../../contract/settings.js";
import { formOf, gpuLayersChoiceOf, readEngineForm } from "../../../../renderer/settings/engineSettingsForm.js";

const running: EngineSettings = {
    contextSize: 4096,
    gpu: "auto",
    gpuLayers: "auto",
    threads: null,
    flashAttention: true,
    kvCacheType: "f16",
    decodeSequences: 4,
    pageTokens: 256,
    poolPages: null,
    speculation: "off",
    draftModel: null,
    draftMaxTokens: 16,
    draftMinConfidence: 0.6
};

describe("the engine settings form: GPU backend and offload", () => {
    it("reads the backend and the layers as two settings, and asks only for what changed", () => {
        const form = formOf(running);
        expect(form).toMatchObject({ gpu: "auto", gpuLayers: "auto" });
        expect(readEngineForm(form, running)).toEqual({ kind: "change", change: {} });
        expect(readEngineForm({ ...form, gpu: "off" }, running)).toEqual({ kind: "change", change: { gpu: "off" } });
        expect(readEngineForm({ ...form, gpuLayers: " 12 " }, running)).toEqual({ kind: "change", change: { gpuLayers: 12 } });
        expect(readEngineForm({ ...form, gpuLayers: "0" }, running)).toEqual({ kind: "change", change: { gpuLayers: 0 } });
        expect(readEngineForm({ ...form, gpu: "vulkan", gpuLayers: "2" }, running)).toEqual({
            kind: "change",
            change: { gpu: "vulkan", gpuLayers: 2 }
        });
        expect(formOf({ ...running, gpu: "vulkan", gpuLayers: 12 })).toMatchObject({ gpu: "vulkan", gpuLayers: "12" });
    });

    it("shows the number's input for anything but auto", () => {
        expect(gpuLayersChoiceOf("auto")).toBe("auto");
        expect(gpuLayersChoiceOf("12")).toBe("layers");
        expect(gpuLayersChoiceOf("")).toBe("layers");
    });

    it("says which number is unusable and what to give", () => {
        const form = formOf(running);
        for (const text of ["", "-1", "2.5", "1025", "many"]) {
            expect(readEngineForm({ ...form, gpuLayers: text }, running)).toEqual({
                kind: "invalid",
                message: `GPU offload: the number of layers is "${text}"; give a whole number from 0 to 1,024 (the plan checks it against the model's layers), or choose All layers that fit.`
            });
        }
    });
});

describe("the engine settings form: speculative decoding", () => {
    it("reads the choice and the draft model's path, empty as none", () => {
        const form = formOf(running);
        expect(form).toMatchObject({ speculation: "off", draftModel: "" });
        expect(readEngineForm({ ...form, speculation: "input-lookup" }, running)).toEqual({
            kind: "change",
            change: { speculation: "input-lookup" }
        });
        expect(readEngineForm({ ...form, speculation: "draft-model", draftModel: " /models/draft-q4_0.gguf " }, running)).toEqual({
            kind: "change",
            change: { speculation: "draft-model", draftModel: "/models/draft-q4_0.gguf" }
        });
        expect(readEngineForm({ ...form, draftModel: "C:\\Models\\draft.gguf" }, running)).toEqual({
            kind: "change",
            change: { draftModel: "C:\\Models\\draft.gguf" }
        });
        const withDraft = { ...running, speculation: "draft-model" as const, draftModel: "/models/d.gguf" };
        expect(readEngineForm({ ...formOf(withDraft), speculation: "off" }, withDraft)).toEqual({
            kind: "change",
            change: { speculation: "off" }
        });
    });

    it("refuses a relative path, and a draft model chosen without one, by name", () => {
        const form = formOf(running);
        expect(readEngineForm({ ...form, draftModel: "draft.gguf" }, running)).toEqual({
            kind: "invalid",
            message: 'Draft model (GGUF path) is "draft.gguf"; give the file\'s full path, or leave it empty.'
        });
        expect(readEngineForm({ ...form, speculation: "draft-model" }, running)).toEqual({
            kind: "invalid",
            message: "Speculative decoding is Draft model; give the draft model's full path."
        });
    });

    it("reads the drafting: a count of tokens and a probability", () => {
        const form = formOf(running);
        expect(form).toMatchObject({ draftMaxTokens: "16", draftMinConfidence: "0.6" });
        expect(readEngineForm({ ...form, draftMaxTokens: "8", draftMinConfidence: "0" }, running)).toEqual({
            kind: "change",
            change: { draftMaxTokens: 8, draftMinConfidence: 0 }
        });
        expect(readEngineForm({ ...form, draftMinConfidence: ".75" }, running)).toEqual({
            kind: "change",
            change: { draftMinConfidence: 0.75 }
        });
        expect(readEngineForm({ ...form, draftMaxTokens: "65" }, running)).toEqual({
            kind: "invalid",
            message: 'Draft tokens (most ahead of a step) is "65"; give a whole number from 1 to 64.'
        });
        for (const bad of ["1.5", "-0.1", "half", ""]) {
            expect(readEngineForm({ ...form, draftMinConfidence: bad }, running)).toEqual({
                kind: "invalid",
                message: `Draft min probability (0–1) is "${bad}"; give a probability from 0 to 1, such as 0.6.`
            });
        }
    });
});
