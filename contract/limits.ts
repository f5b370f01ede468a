// Every size limit of what crosses a process boundary, in one place: the RPC's schemas
// (contract/rpc/), the WebSocket's maxPayload (host/rpc/RpcServer.ts), the preload bridge
// (main/preload/createBridge.ts), the one RPC client's WebSocket (contract/rpcClient/WebSocketTransport.ts) and the HTTP
// body limit (host/http/KvaultHttpServer.ts) all read them from here, so they cannot disagree.
// Byte limits count UTF-8 bytes, as they travel: a CJK character is one character and three bytes.

const MiB = 1024 * 1024;

export const rpcLimits = Object.freeze({
    /**
     * One RPC message as it travels, in UTF-8 bytes of its JSON: a WebSocket message, an IPC call's
     * params, an HTTP request body. A chat carries its whole conversation, so this is the
     * conversation's limit plus room for the JSON around it.
     */
    maxMessageBytes: 32 * MiB,
    /** All message contents of a conversation together, and a measure's draft, in UTF-8 bytes. */
    maxConversationBytes: 24 * MiB,
    /** importWorkspaces sends the old document in parts of at most this many UTF-8 bytes each. */
    maxImportPartBytes: 4 * MiB
});

/** Limits on what one turn may carry; beyond them a request is refused at the door, never truncated. */
export const turnLimits = Object.freeze({
    maxMessages: 10_000,
    /** One message's content, in characters (UTF-16 code units, as the engine and the store count). */
    maxMessageChars: 4_000_000,
    maxStopStrings: 16,
    maxStopChars: 256,
    maxWorkspaceChars: 256,
    /** Entries of a turn's token bias (OpenAI's `logit_bias`). */
    maxTokenBiases: 1_024,
    /** A grammar's JSON schema, as JSON text in UTF-8 bytes, and how deeply its values may nest. */
    maxGrammarSchemaBytes: 256 * 1024,
    maxGrammarSchemaDepth: 64
});

/** Limits on the other fields of a call, in characters. */
export const fieldLimits = Object.freeze({
    /** requestId, callId and the ids of a drill, a download or a library model. */
    maxIdChars: 256,
    /** A model's path, or "tiny". */
    maxModelPathChars: 4_096,
    /** A download source: an http(s) URL or an `hf:` reference. */
    maxDownloadSourceChars: 4_096
});

/** UTF-8 bytes of `text` without encoding it; a lone surrogate counts 3, as TextEncoder writes U+FFFD for it. */
export function utf8ByteLength(text: string): number {
    let numBytes = 0;
    for (let index = 0; index < text.length; index++) {
        const unit = text.charCodeAt(index);
        if (unit < 0x80) {
            numBytes += 1;
        } else if (unit < 0x800) {
            numBytes += 2;
        } else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1))) {
            numBytes += 4;
            index++;
        } else {
            numBytes += 3;
        }
    }
    return numBytes;
}

/**
 * `text` cut into parts of at most `maxBytes` UTF-8 bytes each, never inside a surrogate pair:
 * joined, they are `text` again. An empty text is one empty part.
 */
export function splitUtf8(text: string, maxBytes: number): string[] {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 4) {
        throw new RangeError(`splitUtf8 needs parts of at least 4 bytes (one character); got ${maxBytes}.`);
    }
    const parts: string[] = [];
    let start = 0;
    let numBytes = 0;
    for (let index = 0; index < text.length; index++) {
        const unit = text.charCodeAt(index);
        const isPair = unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1));
        const size = unit < 0x80 ? 1 : unit < 0x800 ? 2 : isPair ? 4 : 3;
        if (numBytes + size > maxBytes) {
            parts.push(text.slice(start, index));
            start = index;
            numBytes = 0;
        }
        numBytes += size;
        if (isPair) {
            index++;
        }
    }
    parts.push(text.slice(start));
    return parts;
}

function isLowSurrogate(unit: number): boolean {
    return unit >= 0xdc00 && unit <= 0xdfff;
}

/** "9,437,184 bytes", for messages. */
export function formatBytes(numBytes: number): string {
    return `${numBytes.toLocaleString("en-US")} bytes`;
}

/** The stable code of a message over rpcLimits.maxMessageBytes. */
export const MESSAGE_TOO_LARGE = "rpc_message_too_large";

/** Why a message of `numBytes` cannot be sent or taken, or undefined when it fits in `maxBytes`. */
export function oversizeMessage(numBytes: number, maxBytes: number = rpcLimits.maxMessageBytes): string | undefined {
    if (numBytes <= maxBytes) {
        return undefined;
    }
    return (
        `This RPC message is ${formatBytes(numBytes)} (UTF-8); Kvault carries at most ${formatBytes(maxBytes)} in one, ` +
        "so it was not sent on. Shorten the chat (start a new one) or the text you are sending."
    );
}
