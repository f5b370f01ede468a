import type { EngineClient } from "../../contract/engineProtocol.js";
import type { EngineService } from "../service/EngineService.js";
import { engineMethods } from "./engineMethods.js";

/**
 * An EngineService in the caller's own process as a host sees an engine: for tests of a host alone
 * (the HTTP API, the RPC server) on a real engine, without a process between them. Calls go through
 * the same method table as in the engine process.
 */
export function localEngine(service: EngineService): EngineClient {
    const methods = engineMethods(service);
    return {
        get info() {
            return service.info();
        },
        chat: (request, listener, signal) => service.chat(request, listener, signal),
        call: async (method, params) => (methods[method] as (params: unknown) => unknown)(params) as never
    };
}
