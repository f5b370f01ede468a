import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachmentBlock } from "../../../contract/attachments.js";
import { minimalPdf } from "../../support/attachmentFiles.js";
import { startTinyApiServer, type TinyApiServer } from "./tinyApiServer.js";

const API_KEY = "test-key-files-0123456789";

/** A data URL of `bytes` as OpenAI's `file` part carries it. */
const dataUrl = (type: string, bytes: Buffer): string => `data:${type};base64,${bytes.toString("base64")}`;

describe("OpenAI's file content parts in /v1/chat/completions", () => {
    let api: TinyApiServer;
    const post = (content: unknown): Promise<Response> =>
        fetch(`${api.url}/v1/chat/completions`, {
            method: "POST",
            headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" },
            body: JSON.stringify({ model: "tiny", max_tokens: 1, temperature: 0, messages: [{ role: "user", content }] })
        });
    const promptTokens = async (content: unknown): Promise<number> => {
        const response = await post(content);
        expect(response.status).toBe(200);
        return ((await response.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
    };

    beforeAll(async () => {
        api = await startTinyApiServer(API_KEY);
    });
    afterAll(async () => api?.close());

    it("counts a text file part in prompt_tokens: the same tokens as its text sent inline, more than the question alone", async () => {
        const notes = "# Release notes\n\nPages are isolated per workspace.\nThe meter counts every token.\n";
        const question = "Summarise the file.";
        const withFile = await promptTokens([
            { type: "file", file: { filename: "notes.md", file_data: dataUrl("text/markdown", Buffer.from(notes)) } },
            { type: "text", text: question }
        ]);
        const inline = await promptTokens(attachmentBlock("notes.md", notes) + question);
        const alone = await promptTokens(question);
        expect(withFile).toBe(inline);
        expect(withFile).toBeGreaterThan(alone);
    });

    it("reads a PDF part's text the same way", async () => {
        const pdf = minimalPdf("Quarterly report of the vault");
        const withFile = await promptTokens([
            { type: "file", file: { filename: "report.pdf", file_data: dataUrl("application/pdf", pdf) } }
        ]);
        expect(withFile).toBe(await promptTokens(attachmentBlock("report.pdf", "Quarterly report of the vault")));
    });

    it("refuses with a 400 what the model cannot take: an image, an uploaded file's id, a broken PDF", async () => {
        const refusal = async (part: unknown): Promise<{ message: string; code: string | null }> => {
            const response = await post([part, { type: "text", text: "What is this?" }]);
            expect(response.status).toBe(400);
            return ((await response.json()) as { error: { message: string; code: string | null } }).error;
        };
        const image = await refusal({
            type: "file",
            file: { filename: "cat.png", file_data: dataUrl("image/png", Buffer.from([0x89, 0x50])) }
        });
        expect(image.message).toContain("cat.png (image/png); this model takes text only");
        const id = await refusal({ type: "file", file: { file_id: "file-abc" } });
        expect(id.message).toContain("Kvault has no Files API");
        const broken = await refusal({
            type: "file",
            file: { filename: "broken.pdf", file_data: dataUrl("application/pdf", Buffer.from("%PDF-1.4 not really")) }
        });
        expect(broken.code).toBe("attachment_unreadable");
        expect(broken.message).toContain("broken.pdf is not a PDF Kvault can read");
    });
});
