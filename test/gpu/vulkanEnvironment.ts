import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** Where Debian's mesa-vulkan-drivers puts lavapipe's ICD (`.ci/run` installs it). */
const SYSTEM_LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/**
 * The variables that expose a Vulkan device to the gpu project's tests, and to them alone: the
 * vitest config gives them to that project's workers (its `env`), never to the process that starts
 * every project, so the model and browser tests keep seeing the machine as it is. The device is the
 * system's lavapipe, or a driver unpacked privately and named by KVAULT_VULKAN_ICD (an ICD JSON);
 * ggml skips a software device unless GGML_VK_VISIBLE_DEVICES names it (0 unless set).
 */
export function vulkanTestEnvironment(environment: NodeJS.ProcessEnv = process.env): Record<string, string> {
    const privateIcd = environment.KVAULT_VULKAN_ICD;
    const icd =
        privateIcd !== undefined && privateIcd !== ""
            ? privateIcd
            : (environment.VK_ICD_FILENAMES ?? (existsSync(SYSTEM_LAVAPIPE_ICD) ? SYSTEM_LAVAPIPE_ICD : undefined));
    return {
        GGML_VK_VISIBLE_DEVICES: environment.GGML_VK_VISIBLE_DEVICES ?? "0",
        ...(icd === undefined ? {} : { VK_ICD_FILENAMES: icd })
    };
}

/**
 * The folder of a private driver's library, for LD_LIBRARY_PATH, which the Vulkan loader reads only
 * when a process starts (so it is set before any worker starts). Alone it exposes no device: without
 * VK_ICD_FILENAMES the loader looks only in the system's ICD folders.
 */
export function privateDriverLibraryDirectory(environment: NodeJS.ProcessEnv = process.env): string | undefined {
    const privateIcd = environment.KVAULT_VULKAN_ICD;
    if (privateIcd === undefined || privateIcd === "") {
        return undefined;
    }
    if (!existsSync(privateIcd)) {
        throw new Error(`KVAULT_VULKAN_ICD is ${privateIcd}, which does not exist; give the path of a Vulkan ICD JSON file.`);
    }
    const library = (JSON.parse(readFileSync(privateIcd, "utf8")) as { ICD: { library_path: string } }).ICD.library_path;
    return path.dirname(library);
}
