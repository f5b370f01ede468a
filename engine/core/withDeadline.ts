/** Resolves when `promise` settles or `ms` pass, whichever comes first; never rejects. For bounded waits on shutdown paths. */
export function withDeadline(promise: Promise<unknown>, ms: number): Promise<void> {
    return new Promise((resolve) => {
        const timer = setTimeout(resolve, ms);
        const done = (): void => {
            clearTimeout(timer);
            resolve();
        };
        promise.then(done, done);
    });
}
