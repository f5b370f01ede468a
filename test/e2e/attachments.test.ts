import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { attachmentBlock, composeMessage, type ExtractedAttachment } from "../../contract/attachments.js";
import { minimalDocx, minimalPdf } from "../support/attachmentFiles.js";
import { storedWorkspaces } from "./support/appDriver.js";
import { rpcFromPage } from "./support/rpcFromPage.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

// Files attached to a message in the page, read from real files on disk: the host reads each
// one's text, and the chip's tokens, the meter and the stored message are checked against what
// the server itself answers (extractAttachment, tokenize, measure, loadWorkspaces). The engine's
// window is 512 tokens (e2eServeArgs), so a few pages of text do not fit.
describe("attaching files to a message in a real browser", () => {
    const { app } = useKvaultApp({ viewport: { width: 1280, height: 1000 } });
    const poll = { timeout: 60_000, interval: 250 };
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-e2e-attach-"));
    const chips = () =>
        app().page.evaluate<{ name: string; kind: string; numTokens: number }[]>(
            `[...document.querySelectorAll(".attachment-chip")].map((chip) => ({ name: chip.dataset.fileName, kind: chip.dataset.kind, numTokens: Number(chip.dataset.numTokens) }))`
        );
    /** The block the server reads from `file` on disk, and its tokens by the server's tokenizer. */
    const served = async (file: string): Promise<{ extracted: ExtractedAttachment; block: string; numTokens: number }> => {
        const extracted = await rpcFromPage<ExtractedAttachment>(app().page, "extractAttachment", {
            fileName: path.basename(file),
            dataBase64: fs.readFileSync(file).toString("base64")
        });
        const block = attachmentBlock(extracted.name, extracted.text);
        const { tokens } = await rpcFromPage<{ tokens: number[] }>(app().page, "tokenize", {
            content: block,
            addSpecial: false,
            withPieces: false
        });
        return { extracted, block, numTokens: tokens.length };
    };

    it("attaches a source file, a PDF and a DOCX, each counted exactly on its chip and all of them on the meter before sending", async () => {
        const { page } = app();
        const source = path.join(directory, "vault.py");
        fs.writeFileSync(source, "def seal(page):\n    return page.owner == workspace\n");
        const pdf = path.join(directory, "report.pdf");
        fs.writeFileSync(pdf, minimalPdf("Quarterly report of the vault"));
        const docx = path.join(directory, "memo.docx");
        fs.writeFileSync(docx, await minimalDocx(["Memo to the team.", "Pages stay apart."]));

        await page.getByLabel("Message", { exact: true }).fill("Compare them.");
        await page.setInputFiles('input[aria-label="Files to attach"]', [source, pdf, docx]);
        await expect.poll(async () => (await chips()).length, poll).toBe(3);

        const expected = await Promise.all([source, pdf, docx].map(served));
        expect(expected.map(({ extracted }) => extracted.kind)).toEqual(["text", "pdf", "docx"]);
        expect(expected[1]!.extracted.text).toContain("Quarterly report of the vault");
        expect(expected[2]!.extracted.text).toContain("Pages stay apart.");
        expect(await chips()).toEqual(
            expected.map(({ extracted, numTokens }) => ({ name: extracted.name, kind: extracted.kind, numTokens }))
        );

        // The meter measures the message as it will be sent: every file's block, then the typed text.
        const composed = composeMessage(
            expected.map(({ block }) => block),
            "Compare them."
        );
        const workspace = (await storedWorkspaces(page))[0]!;
        const measured = await rpcFromPage<{ draftTokens: number }>(page, "measure", {
            workspace: workspace.id,
            messages: [],
            draft: composed
        });
        expect(measured.draftTokens).toBeGreaterThan(expected.reduce((sum, { numTokens }) => sum + numTokens, 0));
        await expect.poll(() => page.locator(".context-meter").getAttribute("data-draft"), poll).toBe(String(measured.draftTokens));

        await page.getByLabel("Message", { exact: true }).press("Enter");
        await expect.poll(async () => (await storedWorkspaces(page))[0]!.messages[0]?.content, poll).toBe(composed);
        expect(await chips()).toEqual([]);
    });

    it("refuses a file that does not fit with its tokens and the window, attaching nothing of it; a dropped file is attached", async () => {
        const { page } = app();
        await page.getByRole("button", { name: "New workspace" }).click();
        const big = path.join(directory, "big.txt");
        fs.writeFileSync(big, Array.from({ length: 400 }, (_, index) => `Line ${index} of a long file about pages.`).join("\n"));
        await page.setInputFiles('input[aria-label="Files to attach"]', big);
        const refusal = page.locator(".attachment-refusals");
        await expect
            .poll(() => refusal.textContent(), poll)
            .toMatch(/big\.txt needs [\d,]+ tokens; [\d,]+ are left .*\(window 512\)\. It was not attached/);
        const { numTokens } = await served(big);
        expect(await refusal.textContent()).toContain(`big.txt needs ${numTokens.toLocaleString("en-US")} tokens`);
        expect(await chips()).toEqual([]);

        await page.evaluate(`(() => {
            const transfer = new DataTransfer();
            transfer.items.add(new File(["print('dropped')\\n"], "dropped.py", { type: "text/x-python" }));
            document.querySelector("form.composer").dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
        })()`);
        await expect.poll(async () => (await chips()).map((chip) => chip.name), poll).toEqual(["dropped.py"]);
        fs.rmSync(directory, { recursive: true, force: true });
    });
});
