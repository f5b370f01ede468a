// Pure: joins the update-info files (latest.yml, latest-mac.yml, …) that one platform's x64 and
// arm64 builds each write under the same name. The Installers workflow builds each architecture
// on its own runner, so Windows' two builds both write a latest.yml that lists only their own
// installer; electron-updater reads one latest.yml and picks, among its `files`, the one whose
// name has the machine's architecture in it (electron-updater's Provider findFile). The release
// job publishes the joined file. Only electron-builder's own layout is read: top-level
// `key: value` lines and a `files:` list whose items start with "  - ".

export class UpdateInfoMergeError extends Error {}

interface ParsedUpdateInfo {
    readonly version: string;
    /** The lines before `files:`, `files:` itself excluded. */
    readonly head: readonly string[];
    /** Each item of `files`, as its lines. */
    readonly files: readonly (readonly string[])[];
    /** The lines after the list. */
    readonly tail: readonly string[];
}

/** One update-info file listing every build's files, with the first file's top-level fields (path, sha512, releaseDate). */
export function mergeUpdateInfo(name: string, documents: readonly string[]): string {
    if (documents.length === 0) {
        throw new UpdateInfoMergeError(`${name}: nothing to merge.`);
    }
    const parsed = documents.map((document, index) => parseUpdateInfo(`${name} #${index + 1}`, document));
    const [first] = parsed;
    const versions = new Set(parsed.map((info) => info.version));
    if (versions.size !== 1) {
        throw new UpdateInfoMergeError(
            `${name}: the builds are of different versions (${[...versions].join(", ")}); build them from one tag.`
        );
    }
    const seen = new Set<string>();
    const files: (readonly string[])[] = [];
    for (const info of parsed) {
        for (const file of info.files) {
            const url = file[0]!.replace(/^ {2}- url: /, "").trim();
            if (!seen.has(url)) {
                seen.add(url);
                files.push(file);
            }
        }
    }
    return [...first!.head, "files:", ...files.flat(), ...first!.tail].join("\n").replace(/\n*$/, "\n");
}

function parseUpdateInfo(name: string, document: string): ParsedUpdateInfo {
    const lines = document.replace(/\r\n/g, "\n").split("\n");
    const start = lines.indexOf("files:");
    if (start === -1) {
        throw new UpdateInfoMergeError(`${name} has no files: list; it is not an electron-builder update-info file.`);
    }
    let end = start + 1;
    const files: string[][] = [];
    for (; end < lines.length; end++) {
        const line = lines[end]!;
        if (line.startsWith("  - ")) {
            files.push([line]);
        } else if (line.startsWith("    ") && files.length > 0) {
            files.at(-1)!.push(line);
        } else {
            break;
        }
    }
    if (files.length === 0 || files.some((file) => !file[0]!.startsWith("  - url: "))) {
        throw new UpdateInfoMergeError(`${name}: every item of files: must start with its url.`);
    }
    const head = lines.slice(0, start);
    const version = head
        .find((line) => line.startsWith("version: "))
        ?.slice("version: ".length)
        .trim();
    if (version === undefined || version === "") {
        throw new UpdateInfoMergeError(`${name} has no version.`);
    }
    return { version, head, files, tail: lines.slice(end) };
}
