import { GgmlTensorType, type GgufTensorSpec } from "../../engine/gguf/ggufTypes.js";
import { hashString, SeededRandom } from "./SeededRandom.js";

/**
 * A tensor of seeded uniform noise in `[-bound, bound)`, streamed: its values depend only on the
 * model's seed and the tensor's name, so every machine writes the same bytes.
 */
export function seededTensor(seed: number, name: string, dims: readonly number[], bound: number, type: GgmlTensorType): GgufTensorSpec {
    let random = new SeededRandom(seed ^ hashString(name));
    let expectedStart = 0;
    return {
        name,
        dims,
        type,
        fill(out, start) {
            if (start !== expectedStart) {
                // the writer streams in order; restart if asked again
                random = new SeededRandom(seed ^ hashString(name));
                for (let i = 0; i < start; i++) {
                    random.nextU32();
                }
            }
            for (let i = 0; i < out.length; i++) {
                out[i] = random.nextSymmetric(bound);
            }
            expectedStart = start + out.length;
        }
    };
}

/**
 * A weight matrix: uniform weights scaled to 1/√fan_in keep activations O(1) through the layers,
 * so the greedy tokens depend on the whole context rather than collapsing to one repeated token.
 */
export function seededMatrix(seed: number, name: string, dims: readonly number[], fanIn: number, type: GgmlTensorType): GgufTensorSpec {
    return seededTensor(seed, name, dims, Math.sqrt(3 / fanIn), type);
}

/** A norm's weights: all ones, F32 (llama.cpp keeps 1-d tensors in F32). */
export function onesVector(name: string, length: number): GgufTensorSpec {
    return { name, dims: [length], type: GgmlTensorType.F32, fill: (out) => out.fill(1) };
}
