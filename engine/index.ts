// The engine's public surface: what the hosts (host/, main/) may use of engine/. Everything else
// in engine/ runs inside the engine process, behind the protocol of contract/engineProtocol.ts;
// ESLint holds host/ and main/ to this file. The errors of model files, downloads and the model
// library are the host's (host/models/modelErrors.ts); the RPC's limits are contract/limits.ts's.

export type { TurnResult } from "../contract/engineProtocol.js";
export type { TurnListener } from "../contract/turnEvents.js";
export { engineDefaults, type EngineConfigInput } from "./EngineConfig.js";
export { isKvCacheType, kvCacheTypes, kvRowBytes, type KvCacheType } from "./codec/kvCacheTypes.js";
export { invariant } from "./core/invariant.js";
export { KvaultError } from "./core/KvaultError.js";
export { modelFingerprint } from "./model/modelFingerprint.js";
export { ENGINE_CONFIG_ENV } from "./process/readEngineProcessConfig.js";
export { relayBindingTestsToHost } from "./process/relayBindingTests.js";
export { EngineStoppedError, InvalidRequestError } from "./request/requestErrors.js";
export { describeInsightsMemory } from "./runtime/describeModelMemory.js";
