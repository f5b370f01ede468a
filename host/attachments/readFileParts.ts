// OpenAI's `file` content parts in a chat completion's messages (`{type: "file", file: {filename,
// file_data: "data:<type>;base64,…"}}`): each becomes a text part holding the file's block
// (contract/attachments.ts attachmentBlock), so it is counted in prompt_tokens as the app's
// attachments are. A part Kvault cannot turn into text is a 400, never dropped.
import { attachmentBlock } from "../../contract/attachments.js";
import { isRecord } from "../../contract/rpc/fieldSchemas.js";
import { KvaultError } from "../../engine/index.js";
import { invalidRequest } from "../http/OpenAiError.js";
import { extractFileText } from "./extractFileText.js";

/** A data URL's media type and its base64 payload. */
const DATA_URL = /^data:([^;,]*)(?:;[^;,]*)*;base64,(.*)$/s;

/** The media types whose images and sounds a text model cannot take: refused by name rather than read as text. */
const MEDIA_PREFIXES = ["image/", "audio/", "video/"];

/** The request body with every message's `file` parts read into text parts; the body itself as it was when it has none. */
export async function readFileParts(body: unknown): Promise<unknown> {
    if (!isRecord(body) || !Array.isArray(body.messages)) {
        return body;
    }
    const hasFiles = body.messages.some(
        (message) => isRecord(message) && Array.isArray(message.content) && message.content.some(isFilePart)
    );
    if (!hasFiles) {
        return body;
    }
    const messages = await Promise.all(
        body.messages.map(async (message: unknown, index: number) => {
            if (!isRecord(message) || !Array.isArray(message.content)) {
                return message;
            }
            const content = await Promise.all(
                message.content.map((part: unknown, number: number) =>
                    isFilePart(part) ? readFilePart(part, `messages[${index}].content[${number}]`) : part
                )
            );
            return { ...message, content };
        })
    );
    return { ...body, messages };
}

function isFilePart(part: unknown): part is Record<string, unknown> {
    return isRecord(part) && part.type === "file";
}

async function readFilePart(part: Record<string, unknown>, where: string): Promise<{ type: "text"; text: string }> {
    const file = part.file;
    if (!isRecord(file)) {
        throw invalidRequest(`${where}.file must be {filename, file_data}.`, `${where}.file`);
    }
    if (file.file_id !== undefined && file.file_data === undefined) {
        throw invalidRequest(
            `${where}.file.file_id names an uploaded file, but Kvault has no Files API: send the file itself as file_data ("data:<type>;base64,…").`,
            `${where}.file.file_id`
        );
    }
    const match = typeof file.file_data === "string" ? DATA_URL.exec(file.file_data) : null;
    if (match === null) {
        throw invalidRequest(`${where}.file.file_data must be a base64 data URL ("data:<type>;base64,…").`, `${where}.file.file_data`);
    }
    const name = typeof file.filename === "string" && file.filename !== "" ? file.filename : "file";
    const mediaType = match[1]!.toLowerCase();
    if (MEDIA_PREFIXES.some((prefix) => mediaType.startsWith(prefix))) {
        throw invalidRequest(
            `${where} is ${name} (${mediaType}); this model takes text only: send text, Markdown, source code, PDF or DOCX files.`,
            `${where}.file`
        );
    }
    try {
        const extracted = await extractFileText(name, Buffer.from(match[2]!, "base64"));
        return { type: "text", text: attachmentBlock(extracted.name, extracted.text) };
    } catch (error) {
        if (error instanceof KvaultError) {
            throw invalidRequest(`${where}: ${error.message}`, `${where}.file`, error.code);
        }
        throw error;
    }
}
