import { Paperclip, X } from "lucide-react";
import { useRef, type ClipboardEvent, type DragEvent } from "react";
import { useAppServices } from "../AppServices.js";
import { formatCount } from "../util/formatCount.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { attachFiles } from "./attachFiles.js";
import { useAttachedFiles, useAttachmentStore } from "./attachmentStore.js";
import "./AttachmentBar.css";

/** What the message box's form takes to attach files dropped on it or pasted into it. */
export interface AttachmentDrop {
    onDragOver(event: DragEvent): void;
    onDrop(event: DragEvent): void;
    onPaste(event: ClipboardEvent): void;
}

/** Drag and drop and paste of files onto the message box; pasted text stays text. */
export function useAttachmentDrop(workspace: Workspace): AttachmentDrop {
    const { rpc } = useAppServices();
    return {
        onDragOver: (event) => {
            if (event.dataTransfer.types.includes("Files")) {
                event.preventDefault();
            }
        },
        onDrop: (event) => {
            if (event.dataTransfer.files.length > 0) {
                event.preventDefault();
                void attachFiles(rpc, workspace, [...event.dataTransfer.files]);
            }
        },
        onPaste: (event) => {
            if (event.clipboardData.files.length > 0) {
                event.preventDefault();
                void attachFiles(rpc, workspace, [...event.clipboardData.files]);
            }
        }
    };
}

/** The Attach button, each attached file with its exact tokens (and a remove button), and why a file was refused. */
export function AttachmentBar({ workspace }: { readonly workspace: Workspace }) {
    const { rpc } = useAppServices();
    const files = useAttachedFiles(workspace.id);
    const refusals = useAttachmentStore((state) => state.refusals[workspace.id]);
    const numReading = useAttachmentStore((state) => state.numReading[workspace.id] ?? 0);
    const input = useRef<HTMLInputElement>(null);
    return (
        <div className="attachment-bar" data-num-files={files.length} data-reading={numReading}>
            <button
                type="button"
                onClick={() => input.current?.click()}
                aria-label="Attach files"
                title="Attach text, Markdown, code, PDF or DOCX files"
            >
                <Paperclip size={16} aria-hidden="true" />
            </button>
            <input
                ref={input}
                type="file"
                multiple
                hidden
                aria-label="Files to attach"
                onChange={(event) => {
                    const chosen = [...(event.target.files ?? [])];
                    event.target.value = "";
                    void attachFiles(rpc, workspace, chosen);
                }}
            />
            {numReading > 0 && <span className="field-hint">Reading {numReading === 1 ? "a file" : `${numReading} files`}…</span>}
            <ul className="attachment-list" aria-label="Attached files">
                {files.map((file) => (
                    <li
                        key={file.id}
                        className="attachment-chip"
                        data-file-name={file.name}
                        data-kind={file.kind}
                        data-num-tokens={file.numTokens}
                        data-num-chunks={file.numChunks}
                    >
                        <span className="attachment-name">{file.name}</span>
                        <span className="attachment-tokens">
                            {file.kind.toUpperCase()} · {formatCount(file.numTokens)} tokens
                            {file.numChunks === undefined ? "" : ` · too large: ${formatCount(file.numChunks)} chunks for retrieval`}
                        </span>
                        <button
                            type="button"
                            className="link-button"
                            aria-label={`Remove ${file.name}`}
                            onClick={() => useAttachmentStore.getState().remove(workspace.id, file.id)}
                        >
                            <X size={14} aria-hidden="true" />
                        </button>
                    </li>
                ))}
            </ul>
            {refusals !== undefined && refusals.length > 0 && (
                <div className="inline-error attachment-refusals" role="alert">
                    {refusals.map((reason, index) => (
                        <p key={index}>{reason}</p>
                    ))}
                    <button
                        type="button"
                        className="link-button"
                        aria-label="Dismiss why files were not attached"
                        onClick={() => useAttachmentStore.getState().dismissRefusals(workspace.id)}
                    >
                        Dismiss
                    </button>
                </div>
            )}
        </div>
    );
}
