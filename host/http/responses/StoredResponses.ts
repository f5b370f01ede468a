// The Responses API's answers kept for `previous_response_id`: each the whole conversation up to
// and including its answer, in memory, per workspace (a key's namespace and the workspace it
// names), so that one key can never continue another's. Bounded both ways; the oldest goes first.
import type { ChatMessage } from "../../../contract/engineProtocol.js";
import { invalidRequest, type OpenAiError } from "../OpenAiError.js";

export const storedResponsesLimits = {
    /** Answers kept per workspace; the oldest is forgotten past it. */
    maxPerWorkspace: 32,
    /** Workspaces with answers kept; the least recently used is forgotten past it. */
    maxWorkspaces: 256
} as const;

export class StoredResponses {
    /** Insertion order is use order: a workspace or answer used again moves to the end. */
    readonly #byWorkspace = new Map<string, Map<string, readonly ChatMessage[]>>();

    /** The conversation ending with answer `responseId` of `workspace`, or the 400 that says it is not kept. */
    conversation(workspace: string, responseId: string): readonly ChatMessage[] {
        const stored = this.#byWorkspace.get(workspace)?.get(responseId);
        if (stored === undefined) {
            throw notStored(responseId);
        }
        this.#touch(workspace);
        return stored;
    }

    store(workspace: string, responseId: string, conversation: readonly ChatMessage[]): void {
        const kept = this.#byWorkspace.get(workspace) ?? new Map<string, readonly ChatMessage[]>();
        kept.set(responseId, conversation);
        if (kept.size > storedResponsesLimits.maxPerWorkspace) {
            kept.delete(kept.keys().next().value!);
        }
        this.#byWorkspace.set(workspace, kept);
        this.#touch(workspace);
        if (this.#byWorkspace.size > storedResponsesLimits.maxWorkspaces) {
            this.#byWorkspace.delete(this.#byWorkspace.keys().next().value!);
        }
    }

    #touch(workspace: string): void {
        const kept = this.#byWorkspace.get(workspace);
        if (kept !== undefined) {
            this.#byWorkspace.delete(workspace);
            this.#byWorkspace.set(workspace, kept);
        }
    }
}

function notStored(responseId: string): OpenAiError {
    return invalidRequest(
        `previous_response_id "${responseId.slice(0, 100)}" is not a response stored in this workspace: Kvault keeps the last ${storedResponsesLimits.maxPerWorkspace} responses of each workspace (the key's, and the one user or X-Kvault-Workspace names) in memory until it restarts, and none sent with store: false. Send the whole conversation in input instead.`,
        "previous_response_id",
        "previous_response_not_found"
    );
}
