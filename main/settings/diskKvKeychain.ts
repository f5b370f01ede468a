import crypto from "node:crypto";
import fs from "node:fs";
import { safeStorage } from "electron";

/** AES-256's key, in bytes. */
const KEY_BYTES = 32;

/**
 * The key (base64) that seals workspaces' KV on disk, kept in `file` encrypted by the OS keychain
 * through Electron's safeStorage (Keychain, DPAPI, libsecret); made on first use. Undefined, with
 * why, when the OS offers no keychain: then no workspace keeps its KV on disk. Call once the app is ready.
 */
export function readOrCreateKeychainKey(file: string): { readonly key: string } | { readonly key: undefined; readonly why: string } {
    if (!safeStorage.isEncryptionAvailable()) {
        return { key: undefined, why: "the OS keychain is not available (safeStorage)" };
    }
    try {
        if (fs.existsSync(file)) {
            const key = safeStorage.decryptString(fs.readFileSync(file));
            if (Buffer.from(key, "base64").length === KEY_BYTES) {
                return { key };
            }
            return { key: undefined, why: `${file} holds no ${KEY_BYTES}-byte key; delete it and the kv-state folder to start over` };
        }
        const key = crypto.randomBytes(KEY_BYTES).toString("base64");
        fs.writeFileSync(file, safeStorage.encryptString(key), { mode: 0o600, flag: "wx" });
        return { key };
    } catch (error) {
        return { key: undefined, why: `the keychain's key could not be read or made (${(error as Error).message})` };
    }
}
