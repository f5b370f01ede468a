import crypto from "node:crypto";
import { CANARY_WORKSPACE_PREFIX } from "../../contract/isolation.js";

export { CANARY_WORKSPACE_PREFIX };

/** What every marker begins with; the secret is what follows. */
export const MARKER_PREFIX = "KV-CANARY-";

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** Characters of a marker's secret: 12 base32 characters, 60 random bits. */
export const MARKER_SECRET_CHARS = 12;

/** "KV-CANARY-" and 12 random base32 characters, new for every run. */
export function randomMarker(): string {
    const bytes = crypto.randomBytes(MARKER_SECRET_CHARS);
    let secret = "";
    for (const byte of bytes) {
        secret += BASE32[byte & 31];
    }
    return MARKER_PREFIX + secret;
}

/** A temporary workspace of one canary run: `kvault-canary:a:<16 hex>`. */
export function canaryWorkspaceId(role: "a" | "b"): string {
    return `${CANARY_WORKSPACE_PREFIX}${role}:${crypto.randomBytes(8).toString("hex")}`;
}

export function isCanaryWorkspace(workspace: string): boolean {
    return workspace.startsWith(CANARY_WORKSPACE_PREFIX);
}
