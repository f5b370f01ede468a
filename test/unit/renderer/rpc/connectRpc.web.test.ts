import { describe, expect, it } from "vitest";
import { rpcUrl } from "../../../../renderer/rpc/connectRpc.js";

describe("rpcUrl", () => {
    it("is the page's own host over ws, or wss under https, with the session's RPC token and never the API key", () => {
        const token = "ab".repeat(32);
        expect(rpcUrl({ protocol: "http:", host: "127.0.0.1:8080" }, token)).toBe(`ws://127.0.0.1:8080/rpc?session_token=${token}`);
        expect(rpcUrl({ protocol: "https:", host: "kvault.local" }, token)).toBe(`wss://kvault.local/rpc?session_token=${token}`);
    });
});
