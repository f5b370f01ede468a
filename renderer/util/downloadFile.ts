/**
 * Saves `text` as a file the user keeps: the browser's download (its Downloads folder, or the
 * save dialog it is set to ask with); the desktop app's window shows its save dialog for the same.
 */
export function downloadFile(name: string, text: string, type: string): void {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.style.display = "none";
    document.body.append(link);
    link.click();
    link.remove();
    // The download has read the blob by the next task; revoking it then frees it.
    setTimeout(() => URL.revokeObjectURL(url), 0);
}
