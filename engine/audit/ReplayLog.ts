import type { RequestId, WorkspaceId } from "../core/ids.js";
import { KvaultError } from "../core/KvaultError.js";
import type { ReplayResult } from "../engineTypes.js";
import type { RoleContext } from "../runtime/RoleContext.js";

/** Finished greedy requests kept for differential replay. */
export const NUM_REPLAYABLE_REQUESTS = 64;

/** Replay was asked of a request the engine cannot replay. */
export class ReplayUnavailableError extends KvaultError {
    readonly code = "replay_unavailable";
}

/** A finished greedy request as it was served: what replay recomputes and compares with. */
export interface ServedRequest {
    readonly request: RequestId;
    /** Whether a host sent it (its id is the host's requestId), rather than the engine's own probes. */
    readonly sentByHost: boolean;
    readonly workspace: WorkspaceId;
    readonly prompt: readonly number[];
    readonly tokens: readonly number[];
}

/**
 * Differential replay (I8): the last finished greedy requests, each recomputed on demand alone in
 * a fresh context of its own with one sequence and compared token by token with what was served.
 * One record per request, found by its id (the host's requestId, for a request a host sent).
 */
export class ReplayLog {
    readonly #served = new Map<RequestId, ServedRequest>();

    constructor(
        /** A fresh context of one sequence, `contextSize` tokens, in the engine's model: nothing else runs in it. */
        private readonly freshContext: (contextSize: number) => Promise<RoleContext>,
        readonly capacity: number = NUM_REPLAYABLE_REQUESTS
    ) {}

    /** Keeps a finished greedy request; the oldest goes once more than `capacity` are kept. */
    record(served: ServedRequest): void {
        // a host's id sent again is its latest request, the newest kept
        this.#served.delete(served.request);
        this.#served.set(served.request, { ...served, prompt: [...served.prompt], tokens: [...served.tokens] });
        if (this.#served.size > this.capacity) {
            this.#served.delete(this.#served.keys().next().value!);
        }
    }

    /** What `replay` can check, oldest first. */
    all(): readonly ServedRequest[] {
        return [...this.#served.values()];
    }

    async replay(id: RequestId): Promise<ReplayResult> {
        const served = this.#served.get(id);
        if (served === undefined) {
            throw new ReplayUnavailableError(
                `Request ${id} cannot be replayed: only the last ${this.capacity} finished greedy (temperature 0) requests are kept.`
            );
        }
        const startedAt = performance.now();
        const context = await this.freshContext(served.prompt.length + served.tokens.length + 1);
        try {
            const slot = context.acquireSequence()!;
            const replayed: number[] = [];
            if (served.tokens.length > 0) {
                for await (const token of slot.generate(served.prompt, { temperature: 0 })) {
                    replayed.push(token);
                    if (replayed.length >= served.tokens.length) {
                        break;
                    }
                }
            }
            const index = served.tokens.findIndex((token, position) => replayed[position] !== token);
            return {
                request: id,
                numTokens: served.tokens.length,
                identical: index < 0,
                ...(index < 0 ? {} : { firstDivergence: { index, served: served.tokens[index]!, replayed: replayed[index] } }),
                durationMs: performance.now() - startedAt
            };
        } finally {
            await context.dispose();
        }
    }
}
