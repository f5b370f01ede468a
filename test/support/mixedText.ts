// Real tokenizers: SentencePiece (llama-spm, phi-3, gemma-4), byte-level BPE with each family's
// pre-tokenizer (llama-bpe = Llama 3, qwen2, gpt-2, command-r, deepseek-llm), and the tiny model's own.
export const VOCABULARIES = ["llama-spm", "phi-3", "gemma-4", "llama-bpe", "qwen2", "qwen35", "gpt-2", "command-r", "deepseek-llm"];

/**
 * Text whose slice and token boundaries land everywhere: inside words, inside multi-byte characters and
 * surrogate pairs, inside combining sequences, runs of spaces, digits and line breaks, CJK with
 * and without punctuation, contractions and code.
 */
export function mixedText(numChars: number): string {
    const pieces = [
        "The page holds sixteen tokens; it's sealed, they'll say, and we've checked it twice. ",
        "東京都の天気は晴れです。明日は雨が降るでしょう、と予報士は言った。",
        "数据页面被密封后不能再写入，每一页都有校验和。",
        "Emoji 🙂👩‍💻🇫🇷 and café (cafe\u0301) with naïve coöperation. ",
        "   indented    with  spaces\n\n\n\ttab\r\nCRLF line\n",
        "const x = 12345678901234567890; // numbers 3.14159, 2,718,281 and 1e-9\n",
        "Ünïcödé wörds: Straße, ǅemal, Ωμέγα, Привет мир, مرحبا بالعالم, שלום. ",
        "한국어 문장입니다. 띄어쓰기가 있어요! ",
        "URLs like https://example.com/a_b-c?d=e&f=g#h, e-mail a.b@c.de. ",
        "ALLCAPSWORD lowercaseword MiXeDcAsE snake_case_word kebab-case-word. "
    ];
    let text = "";
    for (let index = 0; text.length < numChars; index++) {
        // a seeded order, so the pieces meet each other in many ways
        text += pieces[(index * 7 + (index >> 3)) % pieces.length];
    }
    return text.slice(0, numChars);
}
