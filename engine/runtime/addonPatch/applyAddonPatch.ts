import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { KvaultError } from "../../core/KvaultError.js";

/**
 * Kvault's patch of node-llama-cpp's native addon, applied to the source it ships before
 * `npm run build-llama` compiles it:
 *
 * - each llama context gets a thread of its own (AddonContextThread.h, beside this file) on which
 *   all of that context's jobs run in order, instead of hopping between libuv's pool threads on
 *   every token, which slowed decode once a second context was beside it (docs/ARCHITECTURE.md,
 *   Threads; figures in docs/measurements.md), while prefill and decode keep threads of their own
 *   (a long prompt shares the cores with streams by compute turns, runtime/ComputeTurns.ts);
 * - a sequence's state is saved into and loaded from memory JavaScript owns
 *   (AddonContextStateBuffers.cpp), in the state file's own format, instead of through a file:
 *   saved whole into a buffer, or its KV straight into the engine's pages with its metadata apart,
 *   and loaded from views of the pages, each page hashed as it is written (its seal) or read (its
 *   verification) (runtime/MemoryStateExchange.ts);
 * - each context gets a ggml thread pool for its life (AddonContextThreadpool.cpp), as llama-server
 *   has, instead of one made and joined for every graph (addonPatch/contextThreadpool.ts).
 *
 * The patch's name (localLlamaBuild.ts, addonPatchName) goes into the build's cmake options;
 * change it with the patch so that builds made before are rebuilt.
 *
 * The edits are exact text replacements, each expected a known number of times in the file. An
 * edit whose replacement is already there counts as applied, so a source patched by an earlier
 * revision gets only the edits it lacks; if node-llama-cpp's source has moved on, nothing is
 * written and the error says which edit no longer fits. The prebuilt binaries are never touched:
 * they stay the fallback that always works.
 */
export class AddonPatchError extends KvaultError {
    readonly code = "addon_patch_mismatch";
}

interface AddonEdit {
    readonly file: string;
    readonly find: string;
    readonly replace: string;
    /** How many times `find` occurs in node-llama-cpp's unpatched file. */
    readonly count: number;
}

/** Files of the patch's own, copied beside node-llama-cpp's addon sources (its CMakeLists globs addon/*.cpp). */
const patchFiles = ["AddonContextThread.h", "AddonContextStateBuffers.cpp", "AddonContextThreadpool.cpp"] as const;

export const addonEdits: readonly AddonEdit[] = [
    {
        file: "AddonContext.h",
        find: '#include "AddonSampler.h"\n',
        replace: '#include "AddonSampler.h"\n#include "AddonContextThread.h"\n',
        count: 1
    },
    {
        file: "AddonContext.h",
        find: "        std::mutex disposeMutex;\n",
        replace: "        std::mutex disposeMutex;\n        AddonContextThread* thread = nullptr;\n",
        count: 1
    },
    {
        // the end of the constructor, then the destructor
        file: "AddonContext.cpp",
        find: "    }\n}\nAddonContext::~AddonContext() {\n    disposeMT();\n}\n",
        replace:
            "    }\n\n    thread = new AddonContextThread(info.Env());\n}\n" +
            "AddonContext::~AddonContext() {\n    disposeMT();\n    delete thread;\n    thread = nullptr;\n}\n",
        count: 1
    },
    {
        file: "AddonContext.cpp",
        find: "requestedSequenceId);\n    worker->Queue();\n",
        replace: "requestedSequenceId);\n    context->thread->queue(worker);\n",
        count: 1
    },
    {
        // decode, sample, init, unload, state save and load, checkpoint restore: every AddonContext job
        file: "AddonContext.cpp",
        find: "    worker->Queue();\n",
        replace: "    thread->queue(worker);\n",
        count: 7
    },
    {
        file: "AddonContext.h",
        find: "        Napi::Value LoadSequenceStateFromFile(const Napi::CallbackInfo& info);\n",
        replace:
            "        Napi::Value LoadSequenceStateFromFile(const Napi::CallbackInfo& info);\n" +
            "        Napi::Value SaveSequenceStateToBuffer(const Napi::CallbackInfo& info);\n" +
            "        Napi::Value LoadSequenceStateFromChunks(const Napi::CallbackInfo& info);\n",
        count: 1
    },
    {
        file: "AddonContext.cpp",
        find: '                InstanceMethod("loadSequenceStateFromFile", &AddonContext::LoadSequenceStateFromFile),\n',
        replace:
            '                InstanceMethod("loadSequenceStateFromFile", &AddonContext::LoadSequenceStateFromFile),\n' +
            '                InstanceMethod("saveSequenceStateToBuffer", &AddonContext::SaveSequenceStateToBuffer),\n' +
            '                InstanceMethod("loadSequenceStateFromChunks", &AddonContext::LoadSequenceStateFromChunks),\n',
        count: 1
    },
    {
        file: "AddonContext.h",
        find: "        AddonContextThread* thread = nullptr;\n",
        replace:
            "        AddonContextThread* thread = nullptr;\n" +
            "        ggml_threadpool* threadpool = nullptr;\n" +
            "        void (*threadpoolFree)(ggml_threadpool*) = nullptr;\n" +
            "        Napi::Value AttachThreadpool(const Napi::CallbackInfo& info);\n",
        count: 1
    },
    {
        file: "AddonContext.h",
        find: '#include "AddonContextThread.h"\n',
        replace: '#include "AddonContextThread.h"\nclass AddonContext;\nvoid kvaultFreeThreadpool(AddonContext* context);\n',
        count: 1
    },
    {
        file: "AddonContext.cpp",
        find: '                InstanceMethod("loadSequenceStateFromChunks", &AddonContext::LoadSequenceStateFromChunks),\n',
        replace:
            '                InstanceMethod("loadSequenceStateFromChunks", &AddonContext::LoadSequenceStateFromChunks),\n' +
            '                InstanceMethod("attachThreadpool", &AddonContext::AttachThreadpool),\n',
        count: 1
    },
    {
        file: "AddonContext.h",
        find: "        Napi::Value LoadSequenceStateFromChunks(const Napi::CallbackInfo& info);\n",
        replace:
            "        Napi::Value LoadSequenceStateFromChunks(const Napi::CallbackInfo& info);\n" +
            "        Napi::Value SaveSequenceStateToChunks(const Napi::CallbackInfo& info);\n",
        count: 1
    },
    {
        file: "AddonContext.cpp",
        find: '                InstanceMethod("attachThreadpool", &AddonContext::AttachThreadpool),\n',
        replace:
            '                InstanceMethod("attachThreadpool", &AddonContext::AttachThreadpool),\n' +
            '                InstanceMethod("saveSequenceStateToChunks", &AddonContext::SaveSequenceStateToChunks),\n',
        count: 1
    },
    {
        // disposeMemory: the pool outlives the context that computes on it
        file: "AddonContext.cpp",
        find: "    if (currentCtx != nullptr) {\n        llama_free(currentCtx);\n    }\n",
        replace: "    if (currentCtx != nullptr) {\n        llama_free(currentCtx);\n    }\n    kvaultFreeThreadpool(this);\n",
        count: 1
    }
];

function occurrences(text: string, find: string): number {
    return text.split(find).length - 1;
}

export type AddonPatchOutcome = "applied" | "already-applied";

/**
 * Applies the patch to `addonDirectory` (node-llama-cpp's llama/addon). Plan, then apply: every
 * edit is checked against the text first, and files are written only when all fit. "applied" when
 * any edit was made, "already-applied" when every one was there; the patch's own files are copied
 * either way (their newest revision).
 */
export function applyAddonPatch(addonDirectory: string): AddonPatchOutcome {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const files = [...new Set(addonEdits.map((edit) => edit.file))];
    const texts = new Map(files.map((file) => [file, readFileSync(path.join(addonDirectory, file), "utf8")]));
    let numApplied = 0;
    for (const edit of addonEdits) {
        const text = texts.get(edit.file)!;
        if (text.includes(edit.replace)) {
            continue; // an earlier run, or an earlier revision of the patch, made it
        }
        const found = occurrences(text, edit.find);
        if (found !== edit.count) {
            throw new AddonPatchError(
                `Kvault's addon patch expects ${edit.count} occurrence(s) of ${JSON.stringify(edit.find.trim())} in ` +
                    `${edit.file}, found ${found}: this node-llama-cpp's addon source differs from the one the patch was written for. ` +
                    "Update engine/runtime/addonPatch to the new source; until then Kvault runs node-llama-cpp's prebuilt binary."
            );
        }
        texts.set(edit.file, text.split(edit.find).join(edit.replace));
        numApplied++;
    }
    for (const file of patchFiles) {
        copyFileSync(path.join(here, file), path.join(addonDirectory, file));
    }
    for (const [file, text] of texts) {
        writeFileSync(path.join(addonDirectory, file), text);
    }
    return numApplied > 0 ? "applied" : "already-applied";
}
