import { CancelledBeforeSendError } from "../supervisor/engineHostErrors.js";

/** `promise`, or CancelledBeforeSendError as soon as `signal` aborts: a cancelled turn does not wait for the engine to start. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
    return new Promise((resolve, reject) => {
        const abort = (): void => reject(new CancelledBeforeSendError());
        if (signal.aborted) {
            abort();
            return;
        }
        signal.addEventListener("abort", abort, { once: true });
        promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
    });
}
