import type { MessageTiming } from "./workspaces.js";

/**
 * A turn's clock, where the turn runs (the host, for a chat's turn): from its start, to its first
 * text, to its end, in whole milliseconds of `now` (monotonic: performance.now by default).
 */
export function turnTiming(now: () => number = () => performance.now()) {
    const startedAt = now();
    let firstTextAt: number | undefined;
    return {
        text(): void {
            firstTextAt ??= now();
        },
        /** The timing to store with the answer; none when no text came (nothing to measure a rate on). */
        end(): { timing?: MessageTiming } {
            if (firstTextAt === undefined) {
                return {};
            }
            const endedAt = now();
            return { timing: { firstTokenMs: Math.round(firstTextAt - startedAt), totalMs: Math.round(endedAt - startedAt) } };
        }
    };
}
