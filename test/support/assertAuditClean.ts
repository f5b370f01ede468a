import type { AuditResult } from "../../engine/pages/AuditResult.js";
import { invariant } from "../../engine/core/invariant.js";

/** Throws an `InvariantError` listing the violations: tests run it after every step, production never. */
export function assertAuditClean(result: AuditResult): void {
    invariant(
        result.ok,
        () =>
            `page pool audit found ${result.numViolations} violations over ${result.numPagesChecked} pages:\n` +
            result.violations.map((violation) => `  ${violation.invariant}: ${violation.message}`).join("\n")
    );
}
