import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ensurePatchedPrebuiltBuild } from "../support/ensureLocalLlamaBuild.js";
import { ensureFamilyModel, ensureGeneratedModel } from "../support/generatedModels.js";
import { privateDriverLibraryDirectory, vulkanTestEnvironment } from "./vulkanEnvironment.js";

/**
 * The gpu project runs on a real Vulkan device (vulkanEnvironment.ts says which, and how only this
 * project's workers see it). A private driver's library folder goes on LD_LIBRARY_PATH here, before
 * any worker starts, since the loader reads it only at a process's start. No device fails the run,
 * with what to do; it never skips.
 */
export default function setup(): void {
    const libraryDirectory = privateDriverLibraryDirectory();
    if (libraryDirectory !== undefined) {
        process.env.LD_LIBRARY_PATH = [libraryDirectory, process.env.LD_LIBRARY_PATH].filter(Boolean).join(":");
    }

    const devices = listVulkanDevices();
    if (devices.length === 0) {
        throw new Error(
            "The gpu test project found no Vulkan device: node-llama-cpp's Vulkan binary loaded none. Install Debian's " +
                "mesa-vulkan-drivers (apt-get install mesa-vulkan-drivers, as .ci/run does) or set KVAULT_VULKAN_ICD to a " +
                "private driver's ICD JSON; GGML_VK_VISIBLE_DEVICES must name the device (it is 0 unless set)."
        );
    }
    console.log(`gpu project: Vulkan devices ${devices.join(", ")}`);
    ensurePatchedPrebuiltBuild("vulkan");
    ensureGeneratedModel("tiny");
    for (const preset of ["qwen3-tiny", "llama3-tiny", "gemma3-tiny"] as const) {
        ensureFamilyModel(preset, "q8_0");
    }
}

/**
 * The devices node-llama-cpp's Vulkan binary sees, asked in a child process that gets the variables
 * above. From a script file: node-llama-cpp tests a binary in a process started with its parent's
 * arguments, which `node -e` would run as that script again.
 */
function listVulkanDevices(): string[] {
    const entry = pathToFileURL(createRequire(import.meta.url).resolve("node-llama-cpp")).href;
    const directory = mkdtempSync(path.join(os.tmpdir(), "kvault-gpu-setup-"));
    const scriptPath = path.join(directory, "listVulkanDevices.mjs");
    writeFileSync(
        scriptPath,
        `import { getLlama, LlamaLogLevel } from ${JSON.stringify(entry)};\n` +
            'const llama = await getLlama({ gpu: "vulkan", build: "never", logLevel: LlamaLogLevel.error, progressLogs: false });\n' +
            "console.log(JSON.stringify(await llama.getGpuDeviceNames()));\n" +
            "await llama.dispose();\n"
    );
    try {
        const output = execFileSync(process.execPath, [scriptPath], {
            env: { ...process.env, ...vulkanTestEnvironment() },
            encoding: "utf8",
            timeout: 120_000
        });
        return JSON.parse(output.trim().split("\n").at(-1) ?? "[]") as string[];
    } catch (error) {
        console.error(`gpu project: node-llama-cpp's Vulkan binary did not start: ${(error as Error).message.split("\n")[0]}`);
        return [];
    } finally {
        rmSync(directory, { recursive: true, force: true });
    }
}
