// A signal within the page: the settings screen changed the remote backends, so what lists them
// (a workspace's Runs on) asks listBackends again instead of showing the list it read when it opened.

type Listener = () => void;

const listeners = new Set<Listener>();

/** Called by the settings screen after a backend was added, changed or removed. */
export function announceBackendsChanged(): void {
    for (const listener of [...listeners]) {
        listener();
    }
}

/** Calls `listener` on each change until the returned function is called. */
export function onBackendsChanged(listener: Listener): () => void {
    listeners.add(listener);
    return () => void listeners.delete(listener);
}
