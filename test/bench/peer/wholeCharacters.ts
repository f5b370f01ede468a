// llama-server parses every answer with its chat parser, which ends the stream with an error at the
// first byte that is not valid UTF-8 ("does not match the expected … format"), whatever the
// template or --skip-chat-parsing. A generated model's byte-fallback tokens 0x80–0xFF make such
// bytes; both servers get the same logit_bias against them, so both sample the same distribution.
import { buildSyntheticVocabulary } from "../../../synthetic/model/syntheticVocabulary.js";

/** Enough for the fixed pieces (control, the 256 byte tokens, punctuation), whose ids do not depend on the size. */
const FIXED_VOCABULARY_SIZE = 512;

/** OpenAI-style logit_bias: the byte-fallback tokens of bytes 0x80–0xFF, each at −100. */
export function wholeCharacterBias(): Record<string, number> {
    const { tokens } = buildSyntheticVocabulary(FIXED_VOCABULARY_SIZE);
    const bias: Record<string, number> = {};
    for (let byte = 0x80; byte <= 0xff; byte++) {
        const id = tokens.indexOf(`<0x${byte.toString(16).toUpperCase()}>`);
        if (id < 0) {
            throw new Error(`the generated vocabulary has no byte token for 0x${byte.toString(16)}`);
        }
        bias[String(id)] = -100;
    }
    return bias;
}
