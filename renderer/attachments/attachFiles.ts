import { attachmentBlock, composeMessage } from "../../contract/attachments.js";
import { conversationMessages } from "../chat/conversationMessages.js";
import type { KvaultRpc } from "../rpc/KvaultRpc.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useDraftStore } from "../stores/draftStore.js";
import { formatCount } from "../util/formatCount.js";
import { newId } from "../util/newId.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { attachedBlocks, useAttachmentStore } from "./attachmentStore.js";

/** Bytes encoded per step: String.fromCharCode takes its bytes as arguments, and a call has a limited number of them. */
const BASE64_CHUNK_BYTES = 0x8000;

/**
 * Attaches files to a workspace's draft, one after another: the host reads each one's text
 * (extractAttachment), the loaded model counts its block's tokens exactly (tokenize), and the
 * workspace is measured with it (measure); a file that does not fit beside the conversation and
 * the draft is refused with those numbers, never cut. A file the host cannot read is refused with why.
 */
export async function attachFiles(rpc: KvaultRpc, workspace: Workspace, files: readonly File[]): Promise<void> {
    const store = useAttachmentStore.getState();
    for (const file of files) {
        store.reading(workspace.id, 1);
        try {
            const refusal = await attachOne(rpc, workspace, file);
            if (refusal !== undefined) {
                store.refuse(workspace.id, refusal);
            }
        } catch (error) {
            store.refuse(workspace.id, `${file.name}: ${toRpcError(error).message}`);
        } finally {
            store.reading(workspace.id, -1);
        }
    }
}

/** Attaches `file`, or says why not. */
async function attachOne(rpc: KvaultRpc, workspace: Workspace, file: File): Promise<string | undefined> {
    const extracted = await rpc.call("extractAttachment", {
        fileName: file.name,
        dataBase64: base64(new Uint8Array(await file.arrayBuffer()))
    });
    const block = attachmentBlock(extracted.name, extracted.text);
    const { tokens } = await rpc.call("tokenize", { content: block, addSpecial: false, withPieces: false });
    const draft = useDraftStore.getState().drafts[workspace.id] ?? "";
    // The workspace as it would be sent with this file: the meter's own measure, so its numbers are the meter's.
    const measured = await rpc.call("measure", {
        workspace: workspace.id,
        messages: conversationMessages(workspace),
        draft: composeMessage([...attachedBlocks(workspace.id), block], draft)
    });
    if (!measured.fits && useAttachmentStore.getState().numIndexed[workspace.id] !== undefined) {
        // Retrieval is on: the file goes into this workspace's own index, and a question takes its nearest chunks.
        const status = await rpc.call("indexAttachment", { workspace: workspace.id, fileName: extracted.name, text: extracted.text });
        useAttachmentStore.getState().setIndexed(workspace.id, status.files.length);
        const numChunks = status.files.at(-1)?.numChunks ?? 0;
        useAttachmentStore.getState().add(workspace.id, {
            id: newId("file-"),
            name: extracted.name,
            kind: extracted.kind,
            block: "",
            numTokens: tokens.length,
            numChunks
        });
        return undefined;
    }
    if (!measured.fits) {
        const left = measured.limit - measured.usedTokens - (measured.draftTokens - tokens.length);
        return (
            `${file.name} needs ${formatCount(tokens.length)} tokens; ${formatCount(Math.max(0, left))} are left beside this chat and message ` +
            `(window ${formatCount(measured.limit)}). It was not attached, and nothing of it was cut: shorten the file, or start a new workspace.`
        );
    }
    useAttachmentStore
        .getState()
        .add(workspace.id, { id: newId("file-"), name: extracted.name, kind: extracted.kind, block, numTokens: tokens.length });
    return undefined;
}

function base64(bytes: Uint8Array): string {
    let binary = "";
    for (let start = 0; start < bytes.length; start += BASE64_CHUNK_BYTES) {
        binary += String.fromCharCode(...bytes.subarray(start, start + BASE64_CHUNK_BYTES));
    }
    return btoa(binary);
}
