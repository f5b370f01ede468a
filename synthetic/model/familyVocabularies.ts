import { invariant } from "../../engine/core/invariant.js";
import type { GgufMetadataEntry } from "../../engine/gguf/ggufTypes.js";
import { readTaggedGgufMetadata } from "../gguf/taggedGgufMetadata.js";
import { llamaCppAsset } from "./llamaCppAssets.js";

/** llama.cpp's token types (llama_token_type / gguf-py TokenType). */
const CONTROL = 3;
const USER_DEFINED = 4;

export type FamilyVocabularyName = "llama3" | "qwen2.5" | "qwen3" | "phi3" | "gemma3" | "mistral";

interface RenamedToken {
    readonly id: number;
    /** The piece the vocabulary file has at `id`; checked, so a changed file is noticed, not silently patched. */
    readonly was: string;
    readonly text: string;
    readonly type: typeof CONTROL | typeof USER_DEFINED;
}

interface FamilyVocabulary {
    /** In the llama.cpp repository node-llama-cpp ships (llamaCppAssets.ts). */
    readonly file: string;
    readonly numTokens: number;
    /** What the tokenizer is, in words, for `make-model --list` and docs/models.md. */
    readonly description: string;
    /**
     * Pieces the model's own tokenizer has where the vocabulary file has placeholders: tokens added
     * after the file's tokenizer was converted, at the ids the real models give them. `<|...|>`
     * pieces are control tokens (llama.cpp turns any that is not into one, with a warning); tags
     * the models write as text (`<think>`, `<tool_call>`) are user-defined.
     */
    readonly renamed: readonly RenamedToken[];
    readonly specialIds: {
        readonly bos: number;
        readonly eos: number;
        readonly eot?: number;
        readonly unknown?: number;
        readonly padding?: number;
    };
    readonly addBos: boolean;
}

const qwen25AddedTokens: readonly [number, string, typeof CONTROL | typeof USER_DEFINED][] = [
    [151646, "<|object_ref_start|>", CONTROL],
    [151647, "<|object_ref_end|>", CONTROL],
    [151648, "<|box_start|>", CONTROL],
    [151649, "<|box_end|>", CONTROL],
    [151650, "<|quad_start|>", CONTROL],
    [151651, "<|quad_end|>", CONTROL],
    [151652, "<|vision_start|>", CONTROL],
    [151653, "<|vision_end|>", CONTROL],
    [151654, "<|vision_pad|>", CONTROL],
    [151655, "<|image_pad|>", CONTROL],
    [151656, "<|video_pad|>", CONTROL],
    [151657, "<tool_call>", USER_DEFINED],
    [151658, "</tool_call>", USER_DEFINED],
    [151659, "<|fim_prefix|>", CONTROL],
    [151660, "<|fim_middle|>", CONTROL],
    [151661, "<|fim_suffix|>", CONTROL],
    [151662, "<|fim_pad|>", CONTROL],
    [151663, "<|repo_name|>", CONTROL],
    [151664, "<|file_sep|>", CONTROL]
];
const qwen3AddedTokens: typeof qwen25AddedTokens = [
    ...qwen25AddedTokens,
    [151665, "<tool_response>", USER_DEFINED],
    [151666, "</tool_response>", USER_DEFINED],
    [151667, "<think>", USER_DEFINED],
    [151668, "</think>", USER_DEFINED]
];
const overPadding = (added: typeof qwen25AddedTokens): RenamedToken[] =>
    added.map(([id, text, type]) => ({ id, was: `[PAD${id}]`, text, type }));

export const familyVocabularies: Readonly<Record<FamilyVocabularyName, FamilyVocabulary>> = {
    llama3: {
        file: "models/ggml-vocab-llama-bpe.gguf",
        numTokens: 128_256,
        description: "Llama 3's BPE tokenizer (128,256 tokens) with Llama 3.1's <|eom_id|> and <|python_tag|>",
        renamed: [
            { id: 128004, was: "<|reserved_special_token_2|>", text: "<|finetune_right_pad_id|>", type: CONTROL },
            { id: 128008, was: "<|reserved_special_token_4|>", text: "<|eom_id|>", type: CONTROL },
            { id: 128010, was: "<|reserved_special_token_5|>", text: "<|python_tag|>", type: CONTROL }
        ],
        specialIds: { bos: 128000, eos: 128009, eot: 128009, padding: 128004 },
        addBos: true
    },
    "qwen2.5": {
        file: "models/ggml-vocab-qwen2.gguf",
        numTokens: 151_936,
        description: "Qwen2's BPE tokenizer (151,936 tokens) with Qwen2.5's added tokens",
        renamed: overPadding(qwen25AddedTokens),
        specialIds: { bos: 151643, eos: 151645, eot: 151645, padding: 151643 },
        addBos: false
    },
    qwen3: {
        file: "models/ggml-vocab-qwen2.gguf",
        numTokens: 151_936,
        description: "Qwen2's BPE tokenizer (151,936 tokens) with Qwen3's added tokens (<think>, </think>, tool tags)",
        renamed: overPadding(qwen3AddedTokens),
        specialIds: { bos: 151643, eos: 151645, eot: 151645, padding: 151643 },
        addBos: false
    },
    phi3: {
        file: "models/ggml-vocab-phi-3.gguf",
        numTokens: 32_064,
        description: "Phi-3's SentencePiece tokenizer (32,064 tokens)",
        renamed: [],
        specialIds: { bos: 1, eos: 32000, eot: 32007, unknown: 0, padding: 32000 },
        addBos: true
    },
    gemma3: {
        file: "models/ggml-vocab-gemma-4.gguf",
        numTokens: 262_144,
        description:
            "Gemma's 262,144-token tokenizer as llama.cpp ships it (the Gemma 4 BPE file; Gemma 3's own SentencePiece file is not in the bundle) with Gemma 3's <start_of_turn> and <end_of_turn> at their ids",
        renamed: [
            { id: 105, was: "<|turn>", text: "<start_of_turn>", type: CONTROL },
            { id: 106, was: "<turn|>", text: "<end_of_turn>", type: CONTROL }
        ],
        specialIds: { bos: 2, eos: 1, eot: 106, unknown: 3, padding: 0 },
        addBos: true
    },
    mistral: {
        file: "models/ggml-vocab-llama-spm.gguf",
        numTokens: 32_000,
        description:
            "the 32,000-token SentencePiece tokenizer of Llama 2, the shape of Mistral 7B v0.1/v0.2's (same size, same <unk>, <s>, </s>; Mistral's own file is not in the bundle)",
        renamed: [],
        specialIds: { bos: 1, eos: 2, unknown: 0 },
        addBos: true
    }
};

/** Keys the family sets itself; everything else under tokenizer.ggml. is copied as the file has it. */
const setByFamily = new Set([
    "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.padding_token_id",
    "tokenizer.ggml.add_bos_token",
    "tokenizer.ggml.add_eos_token"
]);

const loaded = new Map<FamilyVocabularyName, readonly GgufMetadataEntry[]>();

/** The tokenizer metadata of a family: the vocabulary file's `tokenizer.ggml.*` entries, its placeholders renamed, the family's special ids. */
export function familyTokenizerMetadata(name: FamilyVocabularyName): readonly GgufMetadataEntry[] {
    const cached = loaded.get(name);
    if (cached !== undefined) {
        return cached;
    }
    const vocabulary = familyVocabularies[name];
    const filePath = llamaCppAsset(vocabulary.file);
    const entries: GgufMetadataEntry[] = [];
    for (const [key, value] of readTaggedGgufMetadata(filePath)) {
        if (!key.startsWith("tokenizer.ggml.") || setByFamily.has(key)) {
            continue;
        }
        invariant(
            value.type !== "unsupported",
            () => `${filePath}: ${key} has GGUF type ${value.type === "unsupported" ? value.valueType : ""}`
        );
        entries.push({ key, value });
    }

    const tokensEntry = entries.find(({ key }) => key === "tokenizer.ggml.tokens");
    const typesEntry = entries.find(({ key }) => key === "tokenizer.ggml.token_type");
    invariant(
        tokensEntry?.value.type === "string[]" && typesEntry?.value.type === "i32[]",
        `${filePath} has no token list and token types`
    );
    const tokens = [...tokensEntry.value.value];
    const types = Int32Array.from(typesEntry.value.value);
    invariant(
        tokens.length === vocabulary.numTokens && types.length === tokens.length,
        () => `${filePath} has ${tokens.length} tokens and ${types.length} token types; the ${name} family expects ${vocabulary.numTokens}`
    );
    for (const { id, was, text, type } of vocabulary.renamed) {
        invariant(
            tokens[id] === was,
            () => `${filePath} has ${JSON.stringify(tokens[id])} at token ${id}, where the ${name} family expects ${JSON.stringify(was)}`
        );
        tokens[id] = text;
        types[id] = type;
    }
    entries[entries.indexOf(tokensEntry)] = { key: tokensEntry.key, value: { type: "string[]", value: tokens } };
    entries[entries.indexOf(typesEntry)] = { key: typesEntry.key, value: { type: "i32[]", value: types } };

    const { bos, eos, eot, unknown, padding } = vocabulary.specialIds;
    const id = (key: string, value: number | undefined): GgufMetadataEntry[] =>
        value === undefined ? [] : [{ key: `tokenizer.ggml.${key}`, value: { type: "u32", value } }];
    entries.push(
        ...id("bos_token_id", bos),
        ...id("eos_token_id", eos),
        ...id("eot_token_id", eot),
        ...id("unknown_token_id", unknown),
        ...id("padding_token_id", padding),
        { key: "tokenizer.ggml.add_bos_token", value: { type: "bool", value: vocabulary.addBos } },
        { key: "tokenizer.ggml.add_eos_token", value: { type: "bool", value: false } }
    );
    loaded.set(name, entries);
    return entries;
}

/** The chat template a vocabulary file carries, if any (tokenizer.chat_template). */
export function vocabularyChatTemplate(name: FamilyVocabularyName): string | undefined {
    const value = readTaggedGgufMetadata(llamaCppAsset(familyVocabularies[name].file)).get("tokenizer.chat_template");
    return value?.type === "string" ? value.value : undefined;
}
