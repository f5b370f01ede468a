import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { addonEdits, AddonPatchError, applyAddonPatch } from "../../../engine/runtime/addonPatch/applyAddonPatch.js";
import { addonSourceDirectory } from "../../../engine/runtime/localLlamaBuild.js";

// The patch against the addon source of the node-llama-cpp this checkout installed, copied to a
// temp folder: an upgrade whose source no longer fits fails here, not in a user's build.

const directories: string[] = [];

function unpatchedAddonCopy(): string {
    const directory = mkdtempSync(path.join(os.tmpdir(), "kvault-addon-"));
    directories.push(directory);
    cpSync(addonSourceDirectory(), directory, { recursive: true });
    // A checkout where `npm run build-llama` already ran holds the patched source: undo it here.
    for (const file of new Set(addonEdits.map((edit) => edit.file))) {
        let text = readFileSync(path.join(directory, file), "utf8");
        for (const edit of [...addonEdits].reverse().filter((candidate) => candidate.file === file)) {
            text = text.split(edit.replace).join(edit.find);
        }
        writeFileSync(path.join(directory, file), text);
    }
    rmSync(path.join(directory, "AddonContextThread.h"), { force: true });
    return directory;
}

function snapshot(directory: string): Record<string, string> {
    return Object.fromEntries(
        readdirSync(directory)
            .filter((name) => /\.(cpp|h)$/.test(name))
            .map((name) => [name, readFileSync(path.join(directory, name), "utf8")])
    );
}

afterEach(() => {
    for (const directory of directories.splice(0)) {
        rmSync(directory, { recursive: true, force: true });
    }
});

describe("applyAddonPatch", () => {
    it("sends every job of a context to the context's own thread, and a second run changes nothing", () => {
        const directory = unpatchedAddonCopy();
        const before = readFileSync(path.join(directory, "AddonContext.cpp"), "utf8");
        expect(before.split("worker->Queue();").length - 1).toBe(8);

        expect(applyAddonPatch(directory)).toBe("applied");
        const source = readFileSync(path.join(directory, "AddonContext.cpp"), "utf8");
        expect(source).not.toContain("worker->Queue();");
        expect(source.split("thread->queue(worker);").length - 1).toBe(8);
        expect(source).toContain("thread = new AddonContextThread(info.Env());");
        expect(source).toContain("delete thread;");
        expect(readFileSync(path.join(directory, "AddonContext.h"), "utf8")).toContain('#include "AddonContextThread.h"');
        expect(readFileSync(path.join(directory, "AddonContextThread.h"), "utf8")).toContain("class AddonContextThread");

        const patched = snapshot(directory);
        expect(applyAddonPatch(directory)).toBe("already-applied");
        expect(snapshot(directory)).toEqual(patched);
    });

    it("writes nothing and names the edit when node-llama-cpp's source has moved on", () => {
        const directory = unpatchedAddonCopy();
        const file = path.join(directory, "AddonContext.cpp");
        writeFileSync(file, readFileSync(file, "utf8").replace("    worker->Queue();\n", "    worker->QueueLater();\n"));
        const before = snapshot(directory);

        expect(() => applyAddonPatch(directory)).toThrow(AddonPatchError);
        expect(() => applyAddonPatch(directory)).toThrow(/expects 7 occurrence\(s\) of "worker->Queue\(\);" in AddonContext\.cpp, found 6/);
        expect(snapshot(directory)).toEqual(before);
    });

    it("refuses a source patched in one file and not the other", () => {
        const directory = unpatchedAddonCopy();
        const header = path.join(directory, "AddonContext.h");
        writeFileSync(
            header,
            readFileSync(header, "utf8").replace(
                '#include "AddonSampler.h"\n',
                '#include "AddonSampler.h"\n#include "AddonContextThread.h"\n'
            )
        );

        expect(() => applyAddonPatch(directory)).toThrow(/partly patched \(AddonContext\.h of AddonContext\.h, AddonContext\.cpp\)/);
    });
});
