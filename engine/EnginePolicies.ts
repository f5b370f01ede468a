import { refusePrefillOverflow, type PrefillOverflowPolicy } from "./handoff/PrefillOverflowPolicy.js";
import { verifyingReader, type TransferReader } from "./handoff/TransferReader.js";
import { drainingLeases, type LeasePolicy } from "./pages/LeasePolicy.js";
import { zeroingScrubber, type PageScrubber } from "./pages/PageScrubber.js";
import { measuredAdmission, type AdmissionPolicy } from "./request/admission.js";

/**
 * The rules where the engine stands between a fault of the 2026 incident's class and a leak, each
 * an object received at construction rather than a flag inside the classes that follow it. The
 * engine runs `productionPolicies`; only a fault drill's sandbox (engine/drills/runFaultDrill.ts)
 * swaps one for the leaky variant beside it in engine/drills/, to show the leak its guard prevents.
 * The engine process and its protocol cannot pass any.
 */
export interface EnginePolicies {
    /** Which limit a request is admitted against. */
    readonly admission: AdmissionPolicy;
    /** What prefill does with more tokens than its sequence holds. */
    readonly prefillOverflow: PrefillOverflowPolicy;
    /** What a transfer's reader checks before decode loads anything. */
    readonly reader: TransferReader;
    /** What happens to a page's bytes before it is free again. */
    readonly scrubber: PageScrubber;
    /** What happens to leases that outlive their page's release. */
    readonly leases: LeasePolicy;
}

export const productionPolicies: EnginePolicies = Object.freeze({
    admission: measuredAdmission,
    prefillOverflow: refusePrefillOverflow,
    reader: verifyingReader,
    scrubber: zeroingScrubber,
    leases: drainingLeases
});
