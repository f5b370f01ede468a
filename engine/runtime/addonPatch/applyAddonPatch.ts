import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { KvaultError } from "../../core/KvaultError.js";

/**
 * Kvault's patch of node-llama-cpp's native addon, applied to the source it ships before
 * `npm run build-llama` compiles it: each llama context gets a thread of its own
 * (AddonContextThread.h, beside this file) on which all of that context's jobs run in order,
 * instead of hopping between libuv's pool threads on every token. Measured on 2 cores with a
 * second context beside it: decode about 2× faster (docs/ARCHITECTURE.md, Threads), while prefill
 * and decode keep threads of their own, so a long prompt still never stalls a stream. The patch's
 * name (localLlamaBuild.ts, addonPatchName) goes into the build's cmake options; change it with the
 * thread code so that builds made before are rebuilt.
 *
 * The edits are exact text replacements, each expected a known number of times in the file; if
 * node-llama-cpp's source has moved on, nothing is written and the error says which edit no
 * longer fits. A source that already carries the patch is left as it is (the edits are idempotent).
 * The prebuilt binaries are never touched: they stay the fallback that always works.
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

const patchMarker = "AddonContextThread";

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
    }
];

function occurrences(text: string, find: string): number {
    return text.split(find).length - 1;
}

export type AddonPatchOutcome = "applied" | "already-applied";

/**
 * Applies the patch to `addonDirectory` (node-llama-cpp's llama/addon). Plan, then apply: every
 * edit is checked against the unpatched text first, and files are written only when all fit.
 */
export function applyAddonPatch(addonDirectory: string): AddonPatchOutcome {
    const header = path.join(path.dirname(fileURLToPath(import.meta.url)), "AddonContextThread.h");
    const files = [...new Set(addonEdits.map((edit) => edit.file))];
    const texts = new Map(files.map((file) => [file, readFileSync(path.join(addonDirectory, file), "utf8")]));
    const patched = files.filter((file) => texts.get(file)!.includes(patchMarker));
    if (patched.length === files.length) {
        copyFileSync(header, path.join(addonDirectory, "AddonContextThread.h")); // the newest thread code
        return "already-applied";
    }
    if (patched.length > 0) {
        throw new AddonPatchError(
            `node-llama-cpp's addon in ${addonDirectory} is partly patched (${patched.join(", ")} of ${files.join(", ")}); ` +
                "reinstall it (npm ci) and run npm run build-llama again."
        );
    }
    for (const edit of addonEdits) {
        const found = occurrences(texts.get(edit.file)!, edit.find);
        if (found !== edit.count) {
            throw new AddonPatchError(
                `Kvault's context-thread patch expects ${edit.count} occurrence(s) of ${JSON.stringify(edit.find.trim())} in ` +
                    `${edit.file}, found ${found}: this node-llama-cpp's addon source differs from the one the patch was written for. ` +
                    "Update engine/runtime/addonPatch to the new source; until then Kvault runs node-llama-cpp's prebuilt binary."
            );
        }
        texts.set(edit.file, texts.get(edit.file)!.split(edit.find).join(edit.replace));
    }
    copyFileSync(header, path.join(addonDirectory, "AddonContextThread.h"));
    for (const [file, text] of texts) {
        writeFileSync(path.join(addonDirectory, file), text);
    }
    return "applied";
}
