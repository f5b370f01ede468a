import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { addonEdits, AddonPatchError, applyAddonPatch } from "../../../../engine/runtime/addonPatch/applyAddonPatch.js";
import { addonSourceDirectory } from "../../../../engine/runtime/localLlamaBuild.js";

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
    rmSync(path.join(directory, "AddonContextStateBuffers.cpp"), { force: true });
    rmSync(path.join(directory, "AddonContextThreadpool.cpp"), { force: true });
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
        // the in-memory state methods: declared, registered for JavaScript, and defined in the patch's own file
        const header = readFileSync(path.join(directory, "AddonContext.h"), "utf8");
        expect(header).toContain("Napi::Value SaveSequenceStateToBuffer(const Napi::CallbackInfo& info);");
        expect(header).toContain("Napi::Value LoadSequenceStateFromChunks(const Napi::CallbackInfo& info);");
        expect(header).toContain("Napi::Value SaveSequenceStateToChunks(const Napi::CallbackInfo& info);");
        expect(source).toContain('InstanceMethod("saveSequenceStateToBuffer", &AddonContext::SaveSequenceStateToBuffer),');
        expect(source).toContain('InstanceMethod("loadSequenceStateFromChunks", &AddonContext::LoadSequenceStateFromChunks),');
        expect(source).toContain('InstanceMethod("saveSequenceStateToChunks", &AddonContext::SaveSequenceStateToChunks),');
        const stateBuffers = readFileSync(path.join(directory, "AddonContextStateBuffers.cpp"), "utf8");
        expect(stateBuffers).toContain("Napi::Value AddonContext::SaveSequenceStateToBuffer(");
        expect(stateBuffers).toContain("Napi::Value AddonContext::LoadSequenceStateFromChunks(");
        expect(stateBuffers).toContain("Napi::Value AddonContext::SaveSequenceStateToChunks(");
        expect(stateBuffers.split("thread->queue(worker);").length - 1).toBe(3);
        // the context's own ggml pool: a member, a method registered for JavaScript, freed after llama_free
        expect(header).toContain("ggml_threadpool* threadpool = nullptr;");
        expect(header).toContain("Napi::Value AttachThreadpool(const Napi::CallbackInfo& info);");
        expect(source).toContain('InstanceMethod("attachThreadpool", &AddonContext::AttachThreadpool),');
        expect(source).toMatch(/llama_free\(currentCtx\);\n {4}\}\n {4}kvaultFreeThreadpool\(this\);/);
        const threadpool = readFileSync(path.join(directory, "AddonContextThreadpool.cpp"), "utf8");
        expect(threadpool).toContain("Napi::Value AddonContext::AttachThreadpool(");
        expect(threadpool).toContain("llama_attach_threadpool(context->ctx, pool, nullptr);");
        expect(threadpool.split("thread->queue(worker);").length - 1).toBe(1);

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

    it("gives a source patched by the earliest revision (the context thread alone) only the edits it lacks", () => {
        const directory = unpatchedAddonCopy();
        const threadEdits = addonEdits.filter(
            (edit) => !/SequenceStateToBuffer|SequenceStateToChunks|SequenceStateFromChunks|[Tt]hreadpool/.test(edit.replace)
        );
        expect(threadEdits.length).toBe(addonEdits.length - 8);
        for (const edit of threadEdits) {
            const file = path.join(directory, edit.file);
            writeFileSync(file, readFileSync(file, "utf8").split(edit.find).join(edit.replace));
        }
        const earlier = readFileSync(path.join(directory, "AddonContext.cpp"), "utf8");
        expect(earlier).not.toContain("saveSequenceStateToBuffer");

        expect(applyAddonPatch(directory)).toBe("applied");
        const source = readFileSync(path.join(directory, "AddonContext.cpp"), "utf8");
        expect(source.split("thread->queue(worker);").length - 1).toBe(8); // the thread edits were not made twice
        expect(source.split('InstanceMethod("saveSequenceStateToBuffer"').length - 1).toBe(1);
        expect(source.split('InstanceMethod("saveSequenceStateToChunks"').length - 1).toBe(1);
        expect(readFileSync(path.join(directory, "AddonContext.h"), "utf8").split("SaveSequenceStateToBuffer").length - 1).toBe(1);
        expect(source.split("kvaultFreeThreadpool(this);").length - 1).toBe(1);
        expect(readFileSync(path.join(directory, "AddonContext.h"), "utf8").split("AttachThreadpool").length - 1).toBe(1);
    });
});
