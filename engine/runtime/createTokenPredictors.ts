import {
    DraftSequenceTokenPredictor,
    InputLookupTokenPredictor,
    type LlamaContext,
    type LlamaContextSequence,
    type LlamaModel,
    type TokenPredictor
} from "node-llama-cpp";
import { DraftModelError } from "./DraftModelError.js";
import { DraftModelPredictor, type DraftOptions } from "./DraftModelPredictor.js";
import { refuseContextShift } from "./refuseContextShift.js";
import type { ComputeTurns } from "./ComputeTurns.js";
import { takeComputeTurns } from "./takeComputeTurns.js";
import { releaseThreadsPromptly } from "./releaseThreadsPromptly.js";
import { attachThreadpool } from "./addonPatch/contextThreadpool.js";

/** Speculative decoding with a draft model: the model, loaded, and how it drafts. */
export interface DraftSpeculation extends DraftOptions {
    readonly draftModel: LlamaModel;
}

export type Speculation = "input-lookup" | DraftSpeculation;

/** The token predictors of a context's sequences, and the draft context they draft in, if any. */
export interface TokenPredictors {
    /** The predictor of sequence `index`; undefined without speculation. */
    forSequence(index: number): TokenPredictor | undefined;
    /** Refuses a draft model whose tokenizer is not the model's (DraftModelError), checked on a sequence of the context. */
    checkDraft(target: LlamaContextSequence): Promise<void>;
    dispose(): Promise<void>;
}

/**
 * One predictor per sequence. A draft model gets a context of its own, as large as the target's
 * sequences and with as many; each target sequence drafts in its own draft sequence.
 */
export async function createTokenPredictors(
    speculation: Speculation | undefined,
    target: {
        readonly numSequences: number;
        readonly contextSize: number;
        readonly flashAttention: boolean;
        readonly threads?: number;
        /** The target context's thread pool polling (RoleContextOptions.threadpoolPoll), which the draft context takes too. */
        readonly threadpoolPoll?: number;
        /** The target's compute turns (RoleContextOptions.computeTurns), which the draft's batches take too. */
        readonly computeTurns?: ComputeTurns;
    }
): Promise<TokenPredictors> {
    if (speculation === undefined) {
        return { forSequence: () => undefined, checkDraft: async () => {}, dispose: async () => {} };
    }
    if (speculation === "input-lookup") {
        return { forSequence: () => new InputLookupTokenPredictor(), checkDraft: async () => {}, dispose: async () => {} };
    }
    let draftContext: LlamaContext;
    try {
        draftContext = await speculation.draftModel.createContext({
            contextSize: target.contextSize,
            sequences: target.numSequences,
            flashAttention: target.flashAttention,
            threads: target.threads
        });
    } catch (error) {
        throw new DraftModelError(
            `The draft model's context of ${target.numSequences} × ${target.contextSize.toLocaleString("en-US")} tokens could not be made ` +
                `(${error instanceof Error ? error.message : String(error)}); choose a smaller draft model, fewer decode sequences or a smaller window.`
        );
    }
    // The draft decodes in turn with its target, never beside it: like the target, it gives up its
    // claim on the threads as soon as it is idle (else the target's next step gets half of them),
    // and computes on a pool of its own where the binary has Kvault's patch.
    releaseThreadsPromptly(draftContext);
    if (target.computeTurns !== undefined) {
        takeComputeTurns(draftContext, target.computeTurns);
    }
    if (target.threadpoolPoll !== undefined) {
        await attachThreadpool(draftContext, target.threadpoolPoll).catch(async (error: unknown) => {
            await draftContext.dispose();
            throw error;
        });
    }
    const predictors = Array.from(
        { length: target.numSequences },
        () => new DraftModelPredictor(draftContext.getSequence({ contextShift: refuseContextShift }), speculation)
    );
    return {
        forSequence: (index) => predictors[index],
        async checkDraft(targetSequence) {
            // node-llama-cpp's own check (vocabulary type, special tokens, size and texts), reached through its public predictor
            const check = new DraftSequenceTokenPredictor(predictors[0]!.draftSequence);
            try {
                await check.reset({ targetSequence, stateTokens: [], evaluateOptions: {} });
            } catch (error) {
                throw new DraftModelError(
                    `The draft model cannot draft for this model: ${error instanceof Error ? error.message : String(error)}. ` +
                        "A draft model must have the model's tokenizer: a smaller or more quantized model of the same family."
                );
            } finally {
                check.dispose();
            }
        },
        dispose: () => draftContext.dispose()
    };
}
