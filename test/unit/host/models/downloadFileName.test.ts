import path from "node:path";
import { describe, expect, it } from "vitest";
import { downloadFileName, isDirectlyInside } from "../../../../host/models/downloadFileName.js";

describe("downloadFileName", () => {
    it.each([
        ["https://example.com/models/tiny.gguf", "tiny.gguf"],
        ["https://example.com/models/Tiny.GGUF?download=true", "Tiny.GGUF"],
        ["https://example.com/models/llama/", "llama.gguf"],
        ["https://example.com/a/b//c.gguf//", "c.gguf"],
        ["https://example.com/m%C3%A9t%C3%A9o.gguf", "météo.gguf"],
        ["https://example.com/..%2F..%2Fetc%2Fpasswd", "etc_passwd.gguf"],
        ["https://example.com/%2E%2E", "example.com-a6e3a4cd8a1d.gguf"],
        ["https://example.com/.hidden.gguf", "hidden.gguf"],
        ["https://example.com/a%20b%0Ac%E2%80%AE.gguf", "a_b_c_.gguf"],
        ["https://example.com/model-00001-of-00003.gguf", "model-00001-of-00003.gguf"],
        ["https://example.com/model.gguf.part1of3", "model.gguf"],
        ["https://example.com/download?id=5", "download.gguf"]
    ])("%s is saved as %s", (url, name) => {
        if (name.startsWith("example.com-")) {
            expect(downloadFileName(url)).toMatch(/^example\.com-[0-9a-f]{12}\.gguf$/);
        } else {
            expect(downloadFileName(url)).toBe(name);
        }
    });

    it("is never empty, never a path, and never longer than 100 characters, whatever the URL", () => {
        for (const url of [
            "http://127.0.0.1:8080/",
            "http://h/",
            "http://h/%2F/",
            "http://h/___/",
            `http://h/${"x".repeat(500)}.gguf`,
            "http://h/.../"
        ]) {
            const name = downloadFileName(url);
            expect(name, url).toMatch(/^[^/\\.][^/\\]*\.gguf$/);
            expect(name.length, url).toBeLessThanOrEqual(100);
            expect(isDirectlyInside("/data/models", path.join("/data/models", name)), url).toBe(true);
        }
        // A URL ending in / is told apart from another host's by the hash of the whole URL.
        expect(downloadFileName("http://h/")).not.toBe(downloadFileName("http://h:81/"));
    });
});

describe("isDirectlyInside", () => {
    it("holds only files directly in the directory", () => {
        expect(isDirectlyInside("/data/models", "/data/models/a.gguf")).toBe(true);
        expect(isDirectlyInside("/data/models", "/data/models")).toBe(false);
        expect(isDirectlyInside("/data/models", "/data/models/")).toBe(false);
        expect(isDirectlyInside("/data/models", "/data/models.ipull")).toBe(false);
        expect(isDirectlyInside("/data/models", "/data/models/sub/a.gguf")).toBe(false);
        expect(isDirectlyInside("/data/models", "/data/models/../a.gguf")).toBe(false);
    });
});
