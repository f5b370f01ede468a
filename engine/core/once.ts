/** `action`, run on the first call only: the idempotent end of a count, a release, a subscription. */
export function once(action: () => void): () => void {
    let done = false;
    return () => {
        if (!done) {
            done = true;
            action();
        }
    };
}
