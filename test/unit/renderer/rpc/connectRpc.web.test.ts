import { describe, expect, it } from "vitest";
import { rpcUrl } from "../../../../renderer/rpc/connectRpc.js";

describe("rpcUrl", () => {
    it("is the page's own host over ws, or wss under https, with the key escaped", () => {
        expect(rpcUrl({ protocol: "http:", host: "127.0.0.1:8080" }, "kv-abc")).toBe("ws://127.0.0.1:8080/rpc?key=kv-abc");
        expect(rpcUrl({ protocol: "https:", host: "kvault.local" }, "a b&c")).toBe("wss://kvault.local/rpc?key=a%20b%26c");
    });
});
