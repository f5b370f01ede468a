// The design documents in docs/ and every citation of them: each cited document and section exists,
// every failure mode the contract names has its section, and nothing points outside the repository.
// Links between the pages are docPaths.test.ts's.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { failureModeNames } from "../../../contract/isolation.js";
import { type MarkdownOutline, outlineOf } from "./markdownOutline.js";

const root = path.resolve(import.meta.dirname, "../../..");
const DOCUMENTS = ["ARCHITECTURE.md", "FAILURE-MODES.md", "GLOSSARY.md", "STATE-FORMAT.md"] as const;
/** Folders with sources and documents; everything else at the root is build output, packages or caches. */
const SOURCE_FOLDERS = ["contract", "docs", "engine", "host", "main", "renderer", "resources", "test", ".github"];
const SKIPPED = new Set(["node_modules", ".artifacts", ".cache", "out", "dist", "release"]);
const TEXT_FILE = /\.(ts|tsx|js|mjs|cjs|md|json|yml|yaml|css|html)$/;

function listFiles(folder: string): string[] {
    const files: string[] = [];
    for (const entry of fs.readdirSync(path.join(root, folder), { withFileTypes: true })) {
        const relative = path.posix.join(folder, entry.name);
        if (entry.isDirectory() && !SKIPPED.has(entry.name)) {
            files.push(...listFiles(relative));
        } else if (entry.isFile() && TEXT_FILE.test(entry.name)) {
            files.push(relative);
        }
    }
    return files;
}

const sourceFiles = [
    ...fs.readdirSync(root).filter((name) => TEXT_FILE.test(name) && name !== "package-lock.json"),
    ...SOURCE_FOLDERS.filter((folder) => fs.existsSync(path.join(root, folder))).flatMap(listFiles)
];
const read = (file: string): string => fs.readFileSync(path.join(root, file), "utf8");

function outlineOfDocument(document: string): MarkdownOutline {
    return outlineOf(read(`docs/${document}`));
}

const outlines = new Map(DOCUMENTS.map((document) => [document, outlineOfDocument(document)]));

describe("the design documents", () => {
    it.each(DOCUMENTS)("docs/%s exists and the README links it", (document) => {
        expect(fs.existsSync(path.join(root, "docs", document))).toBe(true);
        expect(read("README.md")).toContain(`](docs/${document})`);
    });

    it("give every failure mode the contract names a section under its slug and its name", () => {
        const outline = outlines.get("FAILURE-MODES.md")!;
        const headings = new Set([...outline.headings].map((heading) => heading.toLowerCase()));
        for (const [slug, name] of Object.entries(failureModeNames)) {
            expect(outline.anchors, slug).toContain(slug);
            expect(headings, slug).toContain(name.toLowerCase());
        }
        const sections = [...read("docs/FAILURE-MODES.md").matchAll(/<a id="([^"]+)"><\/a>\n## /g)].map((match) => match[1]);
        expect(sections.sort()).toEqual(Object.keys(failureModeNames).sort());
    });
});

describe("citations of the design documents", () => {
    // A comment's continuation lines joined, so that a citation broken over two lines reads whole.
    const texts = sourceFiles.map((file) => [file, read(file).replace(/\n\s*(?:\*(?!\/)|\/\/)\s*/g, " ")] as const);

    it("name documents that exist in docs/", () => {
        const missing = texts.flatMap(([file, text]) =>
            [...text.matchAll(/docs\/([A-Za-z-]+\.md)/g)]
                .filter((match) => !fs.existsSync(path.join(root, "docs", match[1]!)))
                .map((match) => `${file}: docs/${match[1]}`)
        );
        expect(missing).toEqual([]);
    });

    it('name sections that exist, where they name one ("docs/ARCHITECTURE.md, Page lifecycle")', () => {
        const cited = texts.flatMap(([file, text]) =>
            [...text.matchAll(/docs\/([A-Z-]+\.md), ([A-Z][^;:),."`\]]*)/g)].map((match) => ({
                file,
                document: match[1]!,
                section: match[2]!.trim()
            }))
        );
        expect(cited.length).toBeGreaterThan(10);
        const unknown = cited
            .filter(({ document, section }) => !(outlines.get(document as (typeof DOCUMENTS)[number])?.headings.has(section) ?? false))
            .map(({ file, document, section }) => `${file}: docs/${document}, ${section}`);
        expect(unknown).toEqual([]);
    });

    it("point nowhere outside the repository", () => {
        // Spelled in parts, so that this file does not match itself.
        const outside = [["..", "shared"].join("/"), ["shared", "reference"].join("/"), ["STYLE", "md"].join(".")];
        const found = texts.flatMap(([file, text]) =>
            outside.filter((needle) => text.includes(needle)).map((needle) => `${file}: ${needle}`)
        );
        expect(found).toEqual([]);
    });
});
