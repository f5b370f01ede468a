/**
 * One graph at a time across an engine's contexts, each computed with every thread the engine has.
 *
 * Split mode has two contexts (prefill and decode) that would otherwise compute side by side, each
 * on the share of the threads node-llama-cpp's ThreadsSplitter gives it: half each while a prompt
 * prefills beside a stream, so the prompt prefilled at half the machine's rate and a long prompt's
 * first token came about twice as late as a server that stalls its streams for it. Here the
 * contexts take turns instead, in the order they asked, Sarathi-Serve's way: a stream's step, then a
 * chunk of the prompt (its size bounded while streams run, `prefillChunkTokens`), then the next
 * step; the prompt gets most of the machine and a stream still gets a step every chunk. A graph
 * computed alone also sums as it would in unified mode, whatever runs beside it.
 *
 * Only native computation runs inside a turn: it never waits on another context, so turns cannot
 * deadlock.
 */
export class ComputeTurns {
    readonly #waiting: (() => void)[] = [];
    #busy = false;
    #numTurns = 0;
    #numWaited = 0;

    /** Turns taken so far. */
    get numTurns(): number {
        return this.#numTurns;
    }

    /** Turns that had to wait for another context's graph. */
    get numWaited(): number {
        return this.#numWaited;
    }

    /** Runs `compute` once no other turn runs, in the order asked; a free machine starts it at once. */
    run<T>(compute: () => Promise<T>): Promise<T> {
        this.#numTurns++;
        if (!this.#busy) {
            this.#busy = true;
            return this.#hold(compute);
        }
        this.#numWaited++;
        return new Promise<void>((resolve) => this.#waiting.push(resolve)).then(() => this.#hold(compute));
    }

    async #hold<T>(compute: () => Promise<T>): Promise<T> {
        try {
            return await compute();
        } finally {
            const next = this.#waiting.shift();
            if (next === undefined) {
                this.#busy = false;
            } else {
                next(); // the turn passes on: never free in between, so no later arrival overtakes the queue
            }
        }
    }
}
