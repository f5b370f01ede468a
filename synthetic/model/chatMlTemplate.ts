// The ChatML template in Jinja, as Qwen and many others ship it. node-llama-cpp recognises it and
// resolves its ChatMLChatWrapper, the same path a real downloaded model takes.
export const CHAT_ML_TEMPLATE =
    "{% for message in messages %}" +
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}" +
    "{% endfor %}" +
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
