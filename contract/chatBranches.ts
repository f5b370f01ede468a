// A chat as a tree of messages: each message follows its parent (null: the chat's first), and the
// chat shown and sent to the model is one path through it, from a first message to a leaf. An
// edited message is a new sibling of the one it replaces, a regenerated answer a new sibling of
// the earlier answer; nothing is overwritten, so every earlier version stays one click away
// (‹ 2/3 ›). The host's store replays its chat files through this class and the renderer applies
// the same changes to its copy, so both always agree on which branch is shown.
import type { StoredMessage } from "./workspaces.js";

/** A chat as StoredWorkspace carries it: the path shown, and every other message. */
export interface BranchedChat {
    readonly messages: readonly StoredMessage[];
    readonly branches: readonly StoredMessage[];
}

/** A message's place among its siblings (the versions of it), 1-based, for the arrows. */
export interface BranchPosition {
    readonly index: number;
    readonly count: number;
    readonly previous: StoredMessage | undefined;
    readonly next: StoredMessage | undefined;
}

/** Siblings in the order they were made: `at` (absent, from before branches, first), then id. */
function byAge(a: StoredMessage, b: StoredMessage): number {
    return (a.at ?? 0) - (b.at ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * The tree, mutable, for replaying a chat file or applying one change. A message on the path
 * follows the one before it there, so its own `parent` may be absent (format 2, or appended to
 * the end); every off-path message names its parent. Messages keep their identity while they stay
 * where they are, so the renderer does not draw them again. Appending to the end of the path (the
 * common case) costs O(1); every other change O(messages).
 */
export class ChatBranches {
    #path: StoredMessage[];
    /** The ids of #path, for `has` in O(1) while a long chat file replays. */
    #pathIds: Set<string>;
    /** Off-path messages by id, each with its parent. */
    readonly #others: Map<string, StoredMessage>;

    constructor(chat: BranchedChat = { messages: [], branches: [] }) {
        this.#path = [...chat.messages];
        this.#pathIds = new Set(chat.messages.map((message) => message.id));
        this.#others = new Map(chat.branches.map((message) => [message.id, { ...message, parent: message.parent ?? null }]));
    }

    get size(): number {
        return this.#path.length + this.#others.size;
    }

    has(id: string): boolean {
        return this.#others.has(id) || this.#pathIds.has(id);
    }

    toChat(): BranchedChat {
        return { messages: [...this.#path], branches: [...this.#others.values()] };
    }

    /**
     * Adds `message` after its parent (absent, or a parent not in the chat: after the path's last
     * message) and shows the branch it ends. Returns the message as stored: with its parent named
     * unless it follows the path's last message.
     */
    append(message: StoredMessage): StoredMessage {
        const last = this.#path.at(-1)?.id ?? null;
        const parent = message.parent === undefined || (message.parent !== null && !this.has(message.parent)) ? last : message.parent;
        const stored: StoredMessage = message.parent === undefined && parent === last ? message : withParent(message, parent);
        if (parent !== last) {
            this.#showPath(parent === null ? [] : this.#pathTo(parent));
        }
        this.#path.push(stored);
        this.#pathIds.add(stored.id);
        return stored;
    }

    /** Shows the branch through `id`, down to its newest leaf. False (nothing changes) when `id` is not in the chat. */
    select(id: string): boolean {
        if (!this.has(id)) {
            return false;
        }
        this.#showPath(this.#descend(this.#pathTo(id)));
        return true;
    }

    /**
     * Removes one message; the messages after it follow its parent instead. When it ended the path,
     * the path ends at its parent's newest other branch. False when `id` is not in the chat.
     */
    delete(id: string): boolean {
        const at = this.#path.findIndex((message) => message.id === id);
        const removed = at === -1 ? this.#others.get(id) : this.#path[at];
        if (removed === undefined) {
            return false;
        }
        const parent = at === -1 ? (removed.parent ?? null) : (this.#path[at - 1]?.id ?? null);
        if (at === -1) {
            this.#others.delete(id);
        } else {
            this.#path.splice(at, 1);
            this.#pathIds.delete(id);
            const next = this.#path[at];
            if (next?.parent !== undefined) {
                this.#path[at] = withParent(next, parent);
            }
        }
        for (const [key, message] of this.#others) {
            if (message.parent === id) {
                this.#others.set(key, withParent(message, parent));
            }
        }
        if (at !== -1 && at === this.#path.length) {
            this.#showPath(this.#descend(this.#path));
        }
        return true;
    }

    clear(): void {
        this.#path = [];
        this.#pathIds.clear();
        this.#others.clear();
    }

    /** Where the message `id` stands among the versions of it (the messages with its parent); count 0 when it is not in the chat. */
    position(id: string): BranchPosition {
        const parent = this.#parentOf(id);
        if (parent === undefined) {
            return { index: 0, count: 0, previous: undefined, next: undefined };
        }
        const siblings = this.#childrenOf(parent);
        const pathChild =
            parent === null ? this.#path[0] : this.#pathIds.has(parent) ? this.#path[this.#indexOnPath(parent) + 1] : undefined;
        if (pathChild !== undefined) {
            siblings.push(pathChild);
        }
        siblings.sort(byAge);
        const index = siblings.findIndex((item) => item.id === id);
        return { index: index + 1, count: siblings.length, previous: siblings[index - 1], next: siblings[index + 1] };
    }

    /** The parent of the message `id` (null: a first message); undefined when it is not in the chat. */
    #parentOf(id: string): string | null | undefined {
        const other = this.#others.get(id);
        if (other !== undefined) {
            return other.parent ?? null;
        }
        const at = this.#indexOnPath(id);
        return at === -1 ? undefined : (this.#path[at - 1]?.id ?? null);
    }

    #indexOnPath(id: string): number {
        return this.#pathIds.has(id) ? this.#path.findIndex((message) => message.id === id) : -1;
    }

    /** The path from the first message to `id`, which is in the chat. */
    #pathTo(id: string): StoredMessage[] {
        const onPath = this.#path.findIndex((message) => message.id === id);
        if (onPath !== -1) {
            return this.#path.slice(0, onPath + 1);
        }
        const chain: StoredMessage[] = [];
        let current: StoredMessage | undefined = this.#others.get(id);
        // Each step goes one parent up and a chat has `size` messages, so this ends within `size` steps even if a file held a cycle.
        for (let steps = 0; current !== undefined && steps <= this.size; steps++) {
            chain.unshift(current);
            const parent: string | null = current.parent ?? null;
            const pathIndex = parent === null ? -1 : this.#path.findIndex((message) => message.id === parent);
            if (pathIndex !== -1) {
                return [...this.#path.slice(0, pathIndex + 1), ...chain];
            }
            current = parent === null ? undefined : this.#others.get(parent);
        }
        return chain;
    }

    /** `path` continued through the newest off-path child at each step. */
    #descend(path: StoredMessage[]): StoredMessage[] {
        const result = [...path];
        const seen = new Set(result.map((message) => message.id));
        // Each step adds a message not yet on it, so this ends within `size` steps.
        for (;;) {
            const newest = this.#childrenOf(result.at(-1)?.id ?? null)
                .filter((message) => !seen.has(message.id))
                .sort(byAge)
                .at(-1);
            if (newest === undefined) {
                return result;
            }
            result.push(newest);
            seen.add(newest.id);
        }
    }

    /** Off-path messages that follow `parent`. */
    #childrenOf(parent: string | null): StoredMessage[] {
        return [...this.#others.values()].filter((message) => (message.parent ?? null) === parent);
    }

    /** Makes `path` (messages of this chat, in order) the one shown; the messages that leave it become branches, naming their parents. */
    #showPath(path: StoredMessage[]): void {
        const ids = new Set(path.map((message) => message.id));
        for (const [index, message] of this.#path.entries()) {
            if (!ids.has(message.id)) {
                this.#others.set(message.id, withParent(message, this.#path[index - 1]?.id ?? null));
            }
        }
        for (const id of ids) {
            this.#others.delete(id);
        }
        this.#path = path;
        this.#pathIds = ids;
    }
}

/** `message` naming `parent`: itself when it does already. */
function withParent(message: StoredMessage, parent: string | null): StoredMessage {
    return message.parent === parent ? message : { ...message, parent };
}

/** A workspace's chat as the tree (its branches absent: none). */
export function chatBranches(workspace: { readonly messages: readonly StoredMessage[]; readonly branches?: readonly StoredMessage[] }) {
    return new ChatBranches({ messages: workspace.messages, branches: workspace.branches ?? [] });
}

/** Every path message's place among its versions, in O(messages log messages): the arrows of a whole chat. */
export function branchPositions(chat: BranchedChat): Map<string, BranchPosition> {
    const groups = new Map<string | null, StoredMessage[]>();
    const add = (parent: string | null, message: StoredMessage): void => {
        const group = groups.get(parent);
        if (group === undefined) {
            groups.set(parent, [message]);
        } else {
            group.push(message);
        }
    };
    chat.messages.forEach((message, index) => add(chat.messages[index - 1]?.id ?? null, message));
    chat.branches.forEach((message) => add(message.parent ?? null, message));
    const positions = new Map<string, BranchPosition>();
    for (const [index, message] of chat.messages.entries()) {
        const siblings = groups.get(chat.messages[index - 1]?.id ?? null)!;
        if (siblings.length > 1 && !Object.isFrozen(siblings)) {
            siblings.sort(byAge);
            Object.freeze(siblings);
        }
        const at = siblings.indexOf(message);
        positions.set(message.id, { index: at + 1, count: siblings.length, previous: siblings[at - 1], next: siblings[at + 1] });
    }
    return positions;
}
