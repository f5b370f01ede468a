import type { EngineErrorPayload } from "../contract/engineProtocol.js";
import { useEngineStore } from "./stores/engineStore.js";

/**
 * Says, over everything, that the engine is not running and why: its start failed (which
 * binaries were tried, what to do) or it kept crashing and Kvault stopped restarting it.
 * Without it the window would only show panels waiting for a first snapshot.
 */
export function EngineProblemBanner() {
    return <EngineProblemNotice problem={useEngineStore((state) => state.engineProblem)} />;
}

export function EngineProblemNotice({ problem }: { readonly problem: EngineErrorPayload | undefined }) {
    if (problem === undefined) {
        return null;
    }
    return (
        <div className="engine-problem" role="alert" data-code={problem.code}>
            <strong>The engine is not running.</strong> {problem.message}
        </div>
    );
}
