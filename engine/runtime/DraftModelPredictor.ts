import { TokenPredictor, type LlamaContextSequence, type Token } from "node-llama-cpp";
import { invariant } from "../core/invariant.js";
import { refuseContextShift } from "./refuseContextShift.js";

/** How a draft model drafts: llama-server's `--draft-max` and `--draft-p-min`. */
export interface DraftOptions {
    /** Most tokens drafted ahead of one decode step. */
    readonly maxTokens: number;
    /** A drafted token the draft model gives less than this probability ends the draft (it is not proposed). 0 drafts `maxTokens` always. */
    readonly minConfidence: number;
}

/**
 * Speculative decoding with a draft model, as llama-server does it: when the target sequence asks
 * for predictions, the draft model drafts greedily, token after token, until `maxTokens` or a token
 * it is unsure of, and the target verifies them all in its next decode step.
 *
 * node-llama-cpp's own `DraftSequenceTokenPredictor` drafts in the background instead, beside the
 * target's steps, where on a small machine it competes for the cores with the steps it is to speed
 * up: slower than plain decoding, and with minTokens 4 the generation never resolved (figures in
 * docs/measurements.md). Here the draft runs only while the target waits for it.
 *
 * The draft sequence holds nothing but its own target's tokens: it keeps only an exact prefix of
 * them (never shifted cells), and `forget` empties it when the target sequence changes workspace.
 */
export class DraftModelPredictor extends TokenPredictor {
    /** The tokens the target sequence holds or is about to evaluate: what the draft continues. */
    #history: Token[] = [];
    #disposed = false;

    constructor(
        readonly draftSequence: LlamaContextSequence,
        readonly options: DraftOptions
    ) {
        super();
    }

    override reset({ stateTokens }: { readonly stateTokens: Token[] }): void {
        this.#history = stateTokens.slice();
    }

    override pushTokens(tokens: Token[]): void {
        this.#history.push(...tokens);
    }

    override async predictTokens(): Promise<Token[]> {
        const sequence = this.draftSequence;
        // the draft must leave room for its drafts, and never shift: beyond its context it drafts nothing
        if (this.#disposed || this.#history.length === 0 || this.#history.length + this.options.maxTokens >= sequence.contextSize) {
            return [];
        }
        // Keep what the draft holds of the history, less its last token, which is evaluated again for its logits.
        const held = sequence.contextTokens;
        let kept = 0;
        while (kept < held.length && kept < this.#history.length - 1 && held[kept] === this.#history[kept]) {
            kept++;
        }
        if (kept < sequence.nextTokenIndex) {
            await sequence.eraseContextTokenRanges([{ start: kept, end: sequence.nextTokenIndex }]);
        }
        const drafts: Token[] = [];
        // a token's confidence costs a softmax over the vocabulary: asked for only when it decides
        const iterator = sequence.evaluateWithMetadata(
            this.#history.slice(kept),
            { confidence: this.options.minConfidence > 0 },
            { temperature: 0, contextShift: refuseContextShift, yieldEogToken: true }
        );
        try {
            for await (const output of iterator) {
                const { token } = output;
                if ("confidence" in output && (output.confidence as number) < this.options.minConfidence) {
                    break;
                }
                drafts.push(token);
                if (drafts.length >= this.options.maxTokens || sequence.model.isEogToken(token)) {
                    break;
                }
            }
        } finally {
            await iterator.return();
        }
        return drafts;
    }

    /**
     * Empties the draft sequence and the history: the target sequence is cleared or released, and
     * its next tokens may be another workspace's. Nothing drafts meanwhile: drafting runs only
     * inside the target's decode steps, and the target has stopped.
     */
    async forget(): Promise<void> {
        this.#history = [];
        if (!this.draftSequence.disposed) {
            await this.draftSequence.clearHistory();
            invariant(
                this.draftSequence.nextTokenIndex === 0,
                () => `the draft sequence still holds ${this.draftSequence.nextTokenIndex} tokens after it was cleared`
            );
        }
    }

    override dispose(): void {
        this.#disposed = true;
        this.#history = [];
    }
}
