import { useEffect, useRef } from "react";
import { CopyButton } from "./CopyButton.js";
import type { LinkHost } from "./ExternalLinks.js";
import type { LinkAddress } from "./linkAddress.js";

/**
 * Asks before a link from a chat opens, showing the whole address (an answer's link text may
 * name another place than its address does). Cancel has the focus, and Esc cancels. Opens with
 * noopener and noreferrer: the new tab gets no handle on this page, and the site no referrer.
 * The desktop app opens only web addresses (main's rule), so there a mail address is offered
 * to copy instead.
 */
export function LinkConfirmDialog({
    address,
    host,
    onClose
}: {
    readonly address: LinkAddress;
    readonly host: LinkHost;
    readonly onClose: () => void;
}) {
    const dialogRef = useRef<HTMLDialogElement>(null);
    useEffect(() => {
        const dialog = dialogRef.current;
        if (dialog !== null && !dialog.open) {
            dialog.showModal();
        }
        return () => dialog?.close();
    }, []);
    const open = (): void => {
        window.open(address.href, "_blank", "noopener,noreferrer");
        onClose();
    };
    const mailOnly = address.kind === "mail" && host === "desktop";
    return (
        <dialog
            ref={dialogRef}
            className="confirm-dialog link-confirm"
            aria-labelledby="link-confirm-title"
            aria-describedby="link-confirm-text"
            data-link-kind={address.kind}
            onCancel={(event) => {
                event.preventDefault();
                onClose();
            }}
        >
            <h2 id="link-confirm-title">
                {address.kind === "web"
                    ? `Open ${address.host} in a new tab?`
                    : mailOnly
                      ? "Copy the mail address?"
                      : `Write to ${address.to}?`}
            </h2>
            <p id="link-confirm-text">
                {address.kind === "web"
                    ? "The link in the chat goes to this address:"
                    : mailOnly
                      ? "The desktop app opens only web addresses. Copy this address into your mail app:"
                      : "Your mail app opens a new message to this address:"}
            </p>
            <p className="link-confirm-address" data-href={address.href}>
                {address.kind === "web" ? address.href : address.to}
            </p>
            <div className="dialog-actions">
                <button type="button" onClick={onClose} aria-label={mailOnly ? "Close" : "Cancel, do not open the link"} autoFocus>
                    {mailOnly ? "Close" : "Cancel"}
                </button>
                {mailOnly ? (
                    <CopyButton text={address.to} label="Copy the mail address" />
                ) : (
                    <button
                        type="button"
                        className="primary"
                        onClick={open}
                        aria-label={address.kind === "web" ? "Open in a new tab" : "Open the mail app"}
                    >
                        {address.kind === "web" ? "Open in new tab" : "Open mail app"}
                    </button>
                )}
            </div>
        </dialog>
    );
}
