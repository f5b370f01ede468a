import type { TurnUsage } from "../../contract/engineProtocol.js";
import { formatCount } from "../util/formatCount.js";

/** What an answer's turn did with its workspace's KV on disk: loaded instead of prefilled, or refused and recomputed (why in the title). */
export function DiskKvNote({ usage }: { readonly usage: TurnUsage }) {
    if (usage.restoredFromDiskTokens !== undefined) {
        return <span className="message-note">{formatCount(usage.restoredFromDiskTokens)} tokens of KV loaded from disk</span>;
    }
    if (usage.diskKvRefused !== undefined) {
        return (
            <span className="message-note" title={usage.diskKvRefused}>
                KV on disk refused and recomputed: {usage.diskKvRefused}
            </span>
        );
    }
    return null;
}
