import { describe, expect, it } from "vitest";
import { downloadFileName } from "../../../../host/models/downloadFileName.js";
import { downloadLayout, MAX_DOWNLOAD_PARTS } from "../../../../host/models/downloadLayout.js";

const models = "/data/models";

describe("downloadLayout: the files one source stands for", () => {
    it("a file that is not split is one part, at its own name", () => {
        expect(downloadLayout("https://h/m/tiny.gguf?download=true", models)).toEqual({
            filePath: "/data/models/tiny.gguf",
            parts: [{ url: "https://h/m/tiny.gguf?download=true", path: "/data/models/tiny.gguf" }],
            joined: false
        });
    });

    it("any part of llama.cpp's split stands for all of them, side by side under their own names, the first opened", () => {
        const layout = downloadLayout("https://h/m/Model-Q4-00002-of-00003.gguf?download=true", models);
        expect(layout).toEqual({
            filePath: "/data/models/Model-Q4-00001-of-00003.gguf",
            parts: [1, 2, 3].map((index) => ({
                url: `https://h/m/Model-Q4-0000${index}-of-00003.gguf?download=true`,
                path: `/data/models/Model-Q4-0000${index}-of-00003.gguf`
            })),
            joined: false
        });
    });

    it("binary parts are fetched one by one and joined into the file downloadFileName names", () => {
        const layout = downloadLayout("https://h/m/model.gguf.part02of03", models);
        expect(layout.filePath).toBe(`/data/models/${downloadFileName("https://h/m/model.gguf.part02of03")}`);
        expect(layout).toEqual({
            filePath: "/data/models/model.gguf",
            parts: ["01", "02", "03"].map((index) => ({
                url: `https://h/m/model.gguf.part${index}of03`,
                path: `/data/models/model.gguf.part${index}of03`
            })),
            joined: true
        });
    });

    it("a name given for a split model (an hf: reference's) names every part after it", () => {
        const layout = downloadLayout("https://h/o/r/resolve/main/x-00001-of-00002.gguf", models, "hf_o_r.Q8_0-00001-of-00002.gguf");
        expect(layout.parts.map((part) => part.path)).toEqual([
            "/data/models/hf_o_r.Q8_0-00001-of-00002.gguf",
            "/data/models/hf_o_r.Q8_0-00002-of-00002.gguf"
        ]);
    });

    it("numbers that name no part (0, past the count) are one file; more parts than Kvault downloads is download_failed", () => {
        expect(downloadLayout("https://h/m-00000-of-00003.gguf", models).parts).toHaveLength(1);
        expect(downloadLayout("https://h/m-00004-of-00003.gguf", models).parts).toHaveLength(1);
        expect(downloadLayout("https://h/m.gguf.part1of1", models).parts).toHaveLength(1);
        expect(downloadLayout(`https://h/m-00001-of-00${MAX_DOWNLOAD_PARTS}.gguf`, models).parts).toHaveLength(MAX_DOWNLOAD_PARTS);
        expect(() => downloadLayout("https://h/m-00001-of-99999.gguf", models)).toThrow(
            expect.objectContaining({
                code: "download_failed",
                message: expect.stringMatching(/split into 99,999 files; Kvault downloads at most 256 parts/)
            })
        );
        expect(() => downloadLayout("https://h/m.gguf.part1of99999999999", models)).toThrow(
            expect.objectContaining({ code: "download_failed" })
        );
    });

    it("a long split name is cut before its part number, so llama.cpp still finds the parts", () => {
        const name = downloadFileName(`https://h/${"x".repeat(300)}-00001-of-00002.gguf`);
        expect(name).toHaveLength(100);
        expect(name.endsWith("-00001-of-00002.gguf")).toBe(true);
    });
});
