import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ensureFamilyModel, ensureGeneratedModel } from "../support/generatedModels.js";

/** Where Debian's mesa-vulkan-drivers puts lavapipe's ICD (`.ci/run` installs it). */
const SYSTEM_LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/**
 * The gpu project runs on a real Vulkan device: the system's (lavapipe from mesa-vulkan-drivers in
 * CI), or a driver unpacked privately and named by KVAULT_VULKAN_ICD (an ICD JSON whose library
 * sits beside the Vulkan loader), so that nothing is installed system-wide for other tests to see.
 * The variables are set here, before the test workers start, because the loader reads
 * LD_LIBRARY_PATH only when a process starts. ggml skips software devices unless
 * GGML_VK_VISIBLE_DEVICES names them. No device fails the run, with what to do; it never skips.
 */
export default function setup(): void {
    const privateIcd = process.env.KVAULT_VULKAN_ICD;
    if (privateIcd !== undefined && privateIcd !== "") {
        if (!existsSync(privateIcd)) {
            throw new Error(`KVAULT_VULKAN_ICD is ${privateIcd}, which does not exist; give the path of a Vulkan ICD JSON file.`);
        }
        const library = (JSON.parse(readFileSync(privateIcd, "utf8")) as { ICD: { library_path: string } }).ICD.library_path;
        process.env.VK_ICD_FILENAMES = privateIcd;
        process.env.LD_LIBRARY_PATH = [path.dirname(library), process.env.LD_LIBRARY_PATH].filter(Boolean).join(":");
    } else if (existsSync(SYSTEM_LAVAPIPE_ICD) && process.env.VK_ICD_FILENAMES === undefined) {
        process.env.VK_ICD_FILENAMES = SYSTEM_LAVAPIPE_ICD;
    }
    process.env.GGML_VK_VISIBLE_DEVICES ??= "0";

    const devices = listVulkanDevices();
    if (devices.length === 0) {
        throw new Error(
            "The gpu test project found no Vulkan device: node-llama-cpp's Vulkan binary loaded none. Install Debian's " +
                "mesa-vulkan-drivers (apt-get install mesa-vulkan-drivers, as .ci/run does) or set KVAULT_VULKAN_ICD to a " +
                "private driver's ICD JSON; GGML_VK_VISIBLE_DEVICES must name the device (it is 0 unless set)."
        );
    }
    console.log(`gpu project: Vulkan devices ${devices.join(", ")}`);
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
        const output = execFileSync(process.execPath, [scriptPath], { env: process.env, encoding: "utf8", timeout: 120_000 });
        return JSON.parse(output.trim().split("\n").at(-1) ?? "[]") as string[];
    } catch (error) {
        console.error(`gpu project: node-llama-cpp's Vulkan binary did not start: ${(error as Error).message.split("\n")[0]}`);
        return [];
    } finally {
        rmSync(directory, { recursive: true, force: true });
    }
}
