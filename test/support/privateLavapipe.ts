// Mesa's Vulkan software driver (lavapipe, whose device is llvmpipe) unpacked into a private folder
// and made visible to one child process alone through its environment: a machine "with Mesa merely
// installed" for the tests of the backend choice, without installing anything system-wide (other
// tests on the machine must not see a Vulkan device).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Where the driver is unpacked; kept between runs (apt-get download needs the network once). */
const ROOT = path.join(os.tmpdir(), "kvault-vulkan");
const LIBRARY_DIRECTORY = path.join(ROOT, "root", "usr", "lib", "x86_64-linux-gnu");
const ICD_FILE = path.join(ROOT, "lvp_icd.json");
/** Debian's packages of the Vulkan loader and of Mesa's drivers (lavapipe among them). */
const PACKAGES = ["libvulkan1", "mesa-vulkan-drivers"] as const;

/**
 * The environment of a process that sees lavapipe as Mesa installed it: the Vulkan loader finds the
 * driver, and ggml's Vulkan backend skips its llvmpipe device (a CPU-type device) unless
 * `visible` names it through GGML_VK_VISIBLE_DEVICES. Unpacks the packages (apt-get download,
 * dpkg-deb -x, no root needed) the first time; throws, saying what to do, where that cannot be done.
 */
export function privateLavapipeEnv({ visible }: { readonly visible: boolean }): Record<string, string> {
    ensureUnpacked();
    return {
        LD_LIBRARY_PATH: LIBRARY_DIRECTORY,
        VK_ICD_FILENAMES: ICD_FILE,
        ...(visible ? { GGML_VK_VISIBLE_DEVICES: "0" } : {})
    };
}

function ensureUnpacked(): void {
    if (fs.existsSync(ICD_FILE) && fs.existsSync(path.join(LIBRARY_DIRECTORY, "libvulkan_lvp.so"))) {
        return;
    }
    if (process.platform !== "linux" || process.arch !== "x64") {
        throw new Error(`A private lavapipe is unpacked from Debian's x86-64 packages; this is ${process.platform}-${process.arch}.`);
    }
    fs.mkdirSync(ROOT, { recursive: true });
    try {
        execFileSync("apt-get", ["download", ...PACKAGES], { cwd: ROOT, stdio: "pipe", timeout: 120_000 });
        for (const deb of fs.readdirSync(ROOT).filter((name) => name.endsWith(".deb"))) {
            execFileSync("dpkg-deb", ["-x", path.join(ROOT, deb), path.join(ROOT, "root")], { stdio: "pipe" });
        }
    } catch (error) {
        throw new Error(
            `Could not unpack ${PACKAGES.join(" and ")} into ${ROOT} (${(error as Error).message.split("\n")[0]}). ` +
                `On Debian or Ubuntu: apt-get update, then run this test again.`
        );
    }
    const icd = {
        ICD: { api_version: "1.1.230", library_path: path.join(LIBRARY_DIRECTORY, "libvulkan_lvp.so") },
        file_format_version: "1.0.0"
    };
    fs.writeFileSync(ICD_FILE, JSON.stringify(icd, null, 4));
}
