import { describe, expect, it } from "vitest";
import { ApiKeys, apiWorkspace } from "../../../../host/http/ApiKeys.js";

describe("ApiKeys", () => {
    it("tells which key was presented, and forgets a revoked one", () => {
        const keys = new ApiKeys([
            { id: "alice", key: "alice-key-1" },
            { id: "bob", key: "bob-key-22" }
        ]);
        expect(keys.identify("alice-key-1")).toBe("alice");
        expect(keys.identify("bob-key-22")).toBe("bob");
        expect(keys.identify("bob-key-2")).toBeUndefined();
        expect(keys.identify("")).toBeUndefined();
        expect(keys.revoke("bob")).toBe(true);
        expect(keys.revoke("bob")).toBe(false);
        expect(keys.identify("bob-key-22")).toBeUndefined();
        expect(keys.ids).toEqual(["alice"]);
        keys.add({ id: "carol", key: "carol-key-3" });
        expect(keys.identify("carol-key-3")).toBe("carol");
    });

    it.each([
        [{ id: "a:b", key: "long-enough-1" }, /^The API key id "a:b" must be 1 to 40 letters, digits, '_' or '-'\.$/],
        [{ id: "a", key: "short" }, /^The API key for "a" must be 8 to 200 characters/],
        [{ id: "alice", key: "another-key-1" }, /^The API key id "alice" is given twice/],
        [{ id: "eve", key: "alice-key-1" }, /^The API key for "eve" is the same as another key's/]
    ])("refuses %j with a typed error", (entry, message) => {
        const keys = new ApiKeys([{ id: "alice", key: "alice-key-1" }]);
        expect(() => keys.add(entry)).toThrow(
            expect.objectContaining({ code: "invalid_api_key_entry", message: expect.stringMatching(message) })
        );
    });

    it("puts each key's workspaces in a namespace of its own, and the default key's where they always were", () => {
        expect(apiWorkspace(undefined, "w")).toBe("api:w");
        expect(apiWorkspace("alice~0123456789abcdef", "w")).toBe("api@alice~0123456789abcdef:w");
        // The default key cannot name its way into a key's namespace: its names always start "api:".
        expect(apiWorkspace(undefined, "@alice~0123456789abcdef:w")).not.toBe(apiWorkspace("alice~0123456789abcdef", "w"));
    });

    it("gives a key made again under a revoked key's id another namespace, and keeps a stored generation", () => {
        const keys = new ApiKeys([{ id: "alice", key: "alice-key-1", generation: "0123456789abcdef" }]);
        expect(keys.namespaceOf("alice")).toBe("alice~0123456789abcdef");
        keys.revoke("alice");
        expect(keys.namespaceOf("alice")).toBeUndefined();
        keys.add({ id: "alice", key: "alice-key-2" });
        expect(keys.namespaceOf("alice")).toMatch(/^alice~[0-9a-f]{16}$/);
        expect(keys.namespaceOf("alice")).not.toBe("alice~0123456789abcdef");
        expect(() => keys.add({ id: "bob", key: "bob-key-22", generation: "not-hex" })).toThrow(
            expect.objectContaining({ code: "invalid_api_key_entry" })
        );
    });
});
