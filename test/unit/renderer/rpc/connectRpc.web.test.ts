import { describe, expect, it } from "vitest";
import { rpcUrl } from "../../../../renderer/rpc/connectRpc.js";

describe("rpcUrl", () => {
    it("is the page's own host over ws, or wss under https, and carries no key (the browser sends the session cookie)", () => {
        expect(rpcUrl({ protocol: "http:", host: "127.0.0.1:8080" })).toBe("ws://127.0.0.1:8080/rpc");
        expect(rpcUrl({ protocol: "https:", host: "kvault.local" })).toBe("wss://kvault.local/rpc");
    });
});
