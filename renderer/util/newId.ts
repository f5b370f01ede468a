/** A random id, `prefix` then 32 hex digits; unique enough to never meet another in one store or engine. */
export function newId(prefix: string): string {
    const bytes = new Uint8Array(16);
    globalThis.crypto.getRandomValues(bytes);
    return prefix + Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
