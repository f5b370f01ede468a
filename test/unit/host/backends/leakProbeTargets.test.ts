import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBackendEntry } from "../../../../host/backends/BackendConfig.js";
import { Backends } from "../../../../host/backends/Backends.js";
import { LeakProbeCannotRunError, LeakProbes } from "../../../../host/backends/leakProbeTargets.js";
import { toErrorAnswer } from "../../../../host/rpc/toErrorAnswer.js";
import { closeServer, listenOnLoopback, pour, type PourCount } from "../../../support/misbehavingBackend.js";

// The isolation panel's leak probe (planLeakProbe) against a backend whose /v1/models never ends,
// over real HTTP on loopback: the host stops reading at the probe's cap and the RPC answers a named
// error with the numbers, not internal_error ("report a bug").
const count: PourCount = { numBytesSent: 0, waiting: false, pouredAll: false };
let server: http.Server;
let probes: LeakProbes;

beforeAll(async () => {
    server = http.createServer((request, response) => {
        request.resume();
        response.writeHead(200, { "content-type": "application/json" });
        response.write('{"object":"list","data":[');
        void pour(response, '{"id":"m","object":"model"},'.repeat(1024), 64 * 1024 * 1024, count);
    });
    const checked = checkBackendEntry({ name: "endless", url: await listenOnLoopback(server), allowRemote: false });
    if (!checked.ok) {
        throw new Error(checked.reason);
    }
    probes = new LeakProbes(new Backends([checked.config]), () => undefined);
});

afterAll(() => closeServer(server));

describe("the leak probe against a backend that never ends its model list", () => {
    it("is a named error naming the bytes read and the cap", async () => {
        const error = await probes.plan("endless/m").catch((caught: unknown) => caught);
        const answer = toErrorAnswer(error);
        expect(answer.code).toBe("probe_cannot_run");
        expect(error).toBeInstanceOf(LeakProbeCannotRunError);
        expect(answer.message).toMatch(
            /\/v1\/models answered 200, but the answer could not be read: .*\/v1\/models sent an answer of more than 16,777,216 bytes \([\d,]+ read\)/
        );
        expect(count.pouredAll).toBe(false);
    }, 60_000);
});
