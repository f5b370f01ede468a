import fs from "node:fs";
import { invariant } from "../../engine/core/invariant.js";
import { llamaCppAsset } from "./llamaCppAssets.js";
import { vocabularyChatTemplate, type FamilyVocabularyName } from "./familyVocabularies.js";

/**
 * Where a family's chat template comes from: the model's own template as llama.cpp keeps it for its
 * tests (models/templates/, copied from the model's tokenizer_config.json), the one inside the
 * family's vocabulary file, or, for the two families the bundle has no template of, written here.
 */
export type ChatTemplateSource =
    | { readonly kind: "llama.cpp"; readonly file: string }
    | { readonly kind: "vocabulary"; readonly vocabulary: FamilyVocabularyName }
    | { readonly kind: "inline"; readonly model: string; readonly template: string };

/** Gemma 3 instruct's template (google/gemma-3-*-it): a system message joins the first user turn; the assistant is "model". */
export const GEMMA3_CHAT_TEMPLATE = `{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\\n'}}
{%- endif -%}
`;

/** Mistral 7B Instruct v0.1/v0.2's template: [INST] turns, each answer closed by </s>, no system role. */
export const MISTRAL_CHAT_TEMPLATE =
    "{{ bos_token }}{% for message in messages %}" +
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}" +
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}" +
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}" +
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}" +
    "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}";

export function chatTemplateText(source: ChatTemplateSource): string {
    switch (source.kind) {
        case "llama.cpp":
            return fs.readFileSync(llamaCppAsset(source.file), "utf8");
        case "vocabulary": {
            const template = vocabularyChatTemplate(source.vocabulary);
            invariant(template !== undefined, `the ${source.vocabulary} vocabulary file has no tokenizer.chat_template`);
            return template;
        }
        case "inline":
            return source.template;
    }
}
