// Which failures mean "no engine is serving" (the window's banner), and which are one call's own.
import { describe, expect, it } from "vitest";
import { RpcError } from "../../../../renderer/rpc/RpcError.js";
import { engineProblemOf } from "../../../../renderer/stores/engineProblem.js";

describe("engineProblemOf", () => {
    it("takes the start failures and the supervisor's giving up, with the host's message", () => {
        for (const code of ["no_usable_binary", "engine_start_failed", "model_file_unusable", "engine_unavailable"]) {
            expect(engineProblemOf(new RpcError(code, `why: ${code}`))).toEqual({ code, message: `why: ${code}` });
        }
    });

    it("leaves one call's failures, and a lost connection, to where they happened", () => {
        for (const code of ["context_length_exceeded", "engine_crashed", "engine_timeout", "connection_lost", "invalid_request"]) {
            expect(engineProblemOf(new RpcError(code, "no"))).toBeUndefined();
        }
        expect(engineProblemOf(new Error("plain"))).toBeUndefined();
    });
});
