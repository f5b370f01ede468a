import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The programs `kvault serve` and `kvault probe` are, as built beside the command (out/main/) and as sources. */
const entries = {
    serve: { built: "serve.js", source: "../headless/serve.ts" },
    probe: { built: "probe.js", source: "../../probe/probeCli.ts" }
} as const;

export type EntryName = keyof typeof entries;

/**
 * Runs `kvault serve` or `kvault probe` as `npm run serve` and `npm run probe` run it: that program
 * reads its own arguments from process.argv and owns the process from there (its usage, its exit
 * codes). The built command finds the built program beside it; from sources (tsx), the source.
 */
export async function runEntry(name: EntryName, args: readonly string[]): Promise<void> {
    const here = fileURLToPath(import.meta.url);
    const fromSource = here.endsWith(".ts");
    const entry = path.resolve(path.dirname(here), fromSource ? entries[name].source : entries[name].built);
    process.argv = [process.argv[0]!, entry, ...args];
    await import(pathToFileURL(entry).href);
}
