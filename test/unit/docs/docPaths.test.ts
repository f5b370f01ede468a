// The README is a front page, and every page of the documentation points only at what exists: each
// relative link resolves to a file (and its #anchor to a heading of that page), and each repository
// path a page names in backticks is there, so a file moved or removed fails here, not in a reader's hands.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { outlineOf, proseOf } from "./markdownOutline.js";

const root = path.resolve(import.meta.dirname, "../../..");
/** The front page's length at most, in lines: what it is, a picture, the commands, what differs, links. */
const FRONT_PAGE_MAX_LINES = 150;
/** Top-level folders of the repository: a backticked path starting with one of these names a file of ours. */
const REPOSITORY_FOLDERS = new Set([
    ".ci",
    ".github",
    "contract",
    "docs",
    "engine",
    "gguf",
    "host",
    "main",
    "probe",
    "renderer",
    "resources",
    "test"
]);
/** Paths that commands make, not files of the repository. */
const GENERATED = ["test/.artifacts/"];

const read = (file: string): string => fs.readFileSync(path.join(root, file), "utf8");
const pages = [
    "README.md",
    ...fs
        .readdirSync(path.join(root, "docs"))
        .filter((name) => name.endsWith(".md"))
        .map((name) => `docs/${name}`)
];

/** Every relative link of a page, Markdown's `](target)` and HTML's `src="target"`, as written. */
function linksOf(markdown: string): string[] {
    const text = proseOf(markdown);
    return [...text.matchAll(/\]\(([^)\s]+)\)/g), ...text.matchAll(/ src="([^"]+)"/g)]
        .map((match) => match[1]!)
        .filter((target) => !/^[a-z]+:/.test(target));
}

/** Every repository path a page names in backticks (`engine/runtime/`, `test/unit/x.test.ts`). */
function namedPathsOf(markdown: string): string[] {
    return [...proseOf(markdown).matchAll(/`([^`\s]+)`/g)]
        .map((match) => match[1]!.replace(/[.,;:]+$/, ""))
        .filter((name) => name.includes("/") && REPOSITORY_FOLDERS.has(name.split("/")[0]!))
        .filter((name) => !/[*<>{}$…|]/.test(name) && !GENERATED.some((prefix) => name.startsWith(prefix)));
}

describe("the README", () => {
    it(`is a front page of at most ${FRONT_PAGE_MAX_LINES} lines that links every page in docs/`, () => {
        const text = read("README.md");
        expect(text.trimEnd().split("\n").length).toBeLessThanOrEqual(FRONT_PAGE_MAX_LINES);
        const linked = new Set(linksOf(text).map((target) => target.split("#")[0]));
        const unlinked = pages.filter((page) => page !== "README.md" && !linked.has(page));
        expect(unlinked).toEqual([]);
    });
});

describe.each(pages)("%s", (page) => {
    const text = read(page);

    it("links only files that exist, and headings those pages have", () => {
        const broken: string[] = [];
        for (const link of linksOf(text)) {
            const [target, anchor] = link.split("#") as [string, string | undefined];
            const resolved = target === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), target));
            if (!fs.existsSync(path.join(root, resolved))) {
                broken.push(`${link} (no file ${resolved})`);
            } else if (anchor !== undefined && !(resolved.endsWith(".md") && outlineOf(read(resolved)).anchors.has(anchor))) {
                broken.push(`${link} (no heading #${anchor} in ${resolved})`);
            }
        }
        expect(broken).toEqual([]);
    });

    it("names only repository paths that exist", () => {
        const missing = namedPathsOf(text).filter((name) => !fs.existsSync(path.join(root, name)));
        expect([...new Set(missing)]).toEqual([]);
    });
});
