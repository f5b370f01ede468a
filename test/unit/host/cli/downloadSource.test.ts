import { describe, expect, it } from "vitest";
import { downloadSource } from "../../../../host/cli/commands/pullModel.js";
import { CliError } from "../../../../host/cli/CliError.js";
import { exitCodes } from "../../../../host/cli/exitCodes.js";
import { catalogueEntries } from "../../../../host/models/catalogue/catalogueEntries.js";

describe("kvault pull's source", () => {
    const qwen = catalogueEntries.find((entry) => entry.id === "qwen3-0.6b")!;

    it("takes a catalogue id as its Q4_K_M file, or the quantization named after a colon", () => {
        const file = (quant: string) => qwen.files.find((candidate) => candidate.quant === quant)!.fileName;
        expect(downloadSource("qwen3-0.6b")).toBe(`hf:${qwen.repo}/${file("Q4_K_M")}`);
        expect(downloadSource("qwen3-0.6b:q8_0")).toBe(`hf:${qwen.repo}/${file("Q8_0")}`);
    });

    it("passes an hf: reference or a URL on as given, for the server to check", () => {
        expect(downloadSource("hf:unsloth/Qwen3-0.6B-GGUF:Q4_K_M")).toBe("hf:unsloth/Qwen3-0.6B-GGUF:Q4_K_M");
        expect(downloadSource("http://127.0.0.1:9/m.gguf")).toBe("http://127.0.0.1:9/m.gguf");
    });

    it("refuses a quantization the catalogue's entry does not come in, as a usage error naming those it has", () => {
        let thrown: unknown;
        try {
            downloadSource("qwen3-0.6b:Q2_K");
        } catch (error) {
            thrown = error;
        }
        expect(thrown).toBeInstanceOf(CliError);
        expect((thrown as CliError).exitCode).toBe(exitCodes.usage);
        expect((thrown as CliError).message).toMatch(/comes as Q4_K_M, Q8_0.*not Q2_K/);
    });
});
