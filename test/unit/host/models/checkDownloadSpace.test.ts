import { describe, expect, it } from "vitest";
import { checkDownloadSpace } from "../../../../host/models/checkDownloadSpace.js";

describe("checkDownloadSpace", () => {
    const base = { directory: "/data/models", name: "m.gguf", keepFreeBytes: 100 };
    it("lets a download go on while its rest and the reserve fit", () => {
        expect(checkDownloadSpace({ ...base, remainingBytes: 900, receivedBytes: 0, freeBytes: 1_000 })).toBeUndefined();
        expect(checkDownloadSpace({ ...base, remainingBytes: undefined, receivedBytes: 5_000, freeBytes: 100 })).toBeUndefined();
    });

    it("refuses with the bytes needed and free", () => {
        expect(checkDownloadSpace({ ...base, remainingBytes: 901, receivedBytes: 0, freeBytes: 1_000 })).toMatchObject({
            code: "download_no_space",
            message:
                "m.gguf does not fit: it needs 901 bytes, and the disk holding /data/models has 1,000 bytes free, of which Kvault keeps 100 bytes for chats and settings. Free some space on that disk, then download again."
        });
        expect(checkDownloadSpace({ ...base, remainingBytes: 2_000, receivedBytes: 3_000, freeBytes: 1_000 })?.message).toBe(
            "The download of m.gguf was stopped after 3,000 bytes: it needs 2,000 bytes more, and the disk holding /data/models has 1,000 bytes free, of which Kvault keeps 100 bytes for chats and settings. Free some space on that disk."
        );
        expect(checkDownloadSpace({ ...base, remainingBytes: undefined, receivedBytes: 7, freeBytes: 99 })?.message).toBe(
            "The download of m.gguf was stopped after 7 bytes: the server did not say how big the file is, and the disk holding /data/models has 99 bytes free, of which Kvault keeps 100 bytes for chats and settings. Free some space on that disk."
        );
    });
});
