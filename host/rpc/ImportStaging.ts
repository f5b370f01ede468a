import { workspaceLimits } from "../../contract/workspaces.js";
import type { RpcParams } from "../../contract/rpc.js";
import { InvalidRequestError } from "../../engine/index.js";

interface PendingImport {
    readonly importId: string;
    readonly numParts: number;
    readonly parts: string[];
    numChars: number;
}

/**
 * Puts importWorkspaces' parts back together, per caller: part 0 starts an import (dropping one the
 * caller left unfinished), each next part must follow in order, and the last gives the document. A
 * caller that goes away drops its unfinished import; so does a part out of order or over the size.
 */
export class ImportStaging {
    readonly #pending = new Map<number, PendingImport>();

    /** `method` and `what` name the call and its document in errors; `maxChars` is the document's limit. */
    constructor(
        private readonly kind: { readonly method: string; readonly what: string; readonly maxChars: number } = {
            method: "importWorkspaces",
            what: "workspaces document",
            maxChars: workspaceLimits.maxImportChars
        }
    ) {}

    /** The whole document once `params` was its last part; undefined while parts are still to come. */
    add(
        callerId: number,
        params: Pick<RpcParams<"importWorkspaces">, "importId" | "part" | "numParts" | "text">,
        callerGone: AbortSignal
    ): string | undefined {
        const { importId, part, numParts, text } = params;
        if (part === 0) {
            const started: PendingImport = { importId, numParts, parts: [], numChars: 0 };
            this.#pending.set(callerId, started);
            callerGone.addEventListener("abort", () => this.#drop(callerId, started), { once: true });
        }
        const pending = this.#pending.get(callerId);
        if (pending === undefined || pending.importId !== importId || pending.numParts !== numParts || pending.parts.length !== part) {
            if (pending?.importId === importId) {
                this.#pending.delete(callerId);
            }
            throw new InvalidRequestError(
                `${this.kind.method} got part ${part} of ${numParts} of import ${importId}, but ${pending === undefined || pending.importId !== importId ? "no such import was started (part 0 starts one)" : `part ${pending.parts.length} of ${pending.numParts} was next`}. Send the parts in order, from 0; nothing was imported.`
            );
        }
        pending.numChars += text.length;
        if (pending.numChars > this.kind.maxChars) {
            this.#pending.delete(callerId);
            throw new InvalidRequestError(
                `The ${this.kind.what} has more than ${this.kind.maxChars.toLocaleString("en-US")} characters (${pending.numChars.toLocaleString("en-US")} in its first ${part + 1} parts); Kvault imports at most that. Nothing was imported.`
            );
        }
        pending.parts.push(text);
        if (pending.parts.length < numParts) {
            return undefined;
        }
        this.#pending.delete(callerId);
        return pending.parts.join("");
    }

    #drop(callerId: number, pending: PendingImport): void {
        if (this.#pending.get(callerId) === pending) {
            this.#pending.delete(callerId);
        }
    }
}
