import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { branchPositions, ChatBranches } from "../../../contract/chatBranches.js";
import type { StoredMessage } from "../../../contract/workspaces.js";

const user = (id: string, at: number, parent?: string | null): StoredMessage => ({ id, role: "user", content: `q ${id}`, at, parent });
const reply = (id: string, at: number, parent?: string | null): StoredMessage => ({
    id,
    role: "assistant",
    content: `a ${id}`,
    at,
    parent
});
const ids = (chat: ChatBranches): string[] => chat.toChat().messages.map((message) => message.id);

/** u1 → a1, then Regenerate (a2 beside a1), then u2 after a2. */
function regenerated(): ChatBranches {
    const chat = new ChatBranches();
    chat.append(user("u1", 1));
    chat.append(reply("a1", 2));
    chat.append(reply("a2", 3, "u1"));
    chat.append(user("u2", 4));
    return chat;
}

describe("ChatBranches", () => {
    it("appends to the end without naming a parent, and keeps each message's identity", () => {
        const chat = new ChatBranches();
        const first = user("u1", 1);
        expect(chat.append(first)).toBe(first);
        expect(chat.append(reply("a1", 2)).parent).toBeUndefined();
        expect(ids(chat)).toEqual(["u1", "a1"]);
        expect(chat.toChat().branches).toEqual([]);
        expect(chat.toChat().messages[0]).toBe(first);
    });

    it("Regenerate keeps the earlier answer as a branch, and the arrows move between them", () => {
        const chat = regenerated();
        expect(ids(chat)).toEqual(["u1", "a2", "u2"]);
        expect(chat.toChat().branches).toEqual([{ ...reply("a1", 2), parent: "u1" }]);
        expect(chat.position("a2")).toMatchObject({ index: 2, count: 2, previous: { id: "a1" }, next: undefined });
        expect(chat.select("a1")).toBe(true);
        expect(ids(chat)).toEqual(["u1", "a1"]);
        expect(chat.position("a1")).toMatchObject({ index: 1, count: 2, next: { id: "a2" } });
        // Back to a2: its branch comes back whole, down to its newest message.
        chat.select("a2");
        expect(ids(chat)).toEqual(["u1", "a2", "u2"]);
    });

    it("an edited message is a sibling of the one it replaces; the answers after the old one stay in its branch", () => {
        const chat = regenerated();
        chat.append(user("u2b", 5, "a2"));
        expect(ids(chat)).toEqual(["u1", "a2", "u2b"]);
        expect(chat.position("u2b")).toMatchObject({ index: 2, count: 2, previous: { id: "u2" } });
        chat.append(user("u1b", 6, null)); // editing the first message
        expect(ids(chat)).toEqual(["u1b"]);
        expect(chat.position("u1b")).toMatchObject({ index: 2, count: 2 });
        chat.select("u1");
        expect(ids(chat)).toEqual(["u1", "a2", "u2b"]);
        expect(chat.size).toBe(6);
    });

    it("deletes one message: the next follows its parent, and a deleted last answer shows the newest other one", () => {
        const chat = regenerated();
        expect(chat.delete("u1")).toBe(true);
        expect(ids(chat)).toEqual(["a2", "u2"]);
        expect(chat.position("a1")).toMatchObject({ index: 1, count: 2 });
        chat.delete("u2");
        chat.delete("a2");
        expect(ids(chat)).toEqual(["a1"]);
        expect(chat.toChat().branches).toEqual([]);
        expect(chat.delete("nope")).toBe(false);
        chat.clear();
        expect(chat.size).toBe(0);
    });

    it("refuses nothing it cannot place: a parent that is not there means the end of the chat; select of a stranger changes nothing", () => {
        const chat = new ChatBranches();
        chat.append(user("u1", 1));
        expect(chat.append(reply("a1", 2, "lost")).parent).toBe("u1");
        expect(chat.select("stranger")).toBe(false);
        expect(ids(chat)).toEqual(["u1", "a1"]);
    });

    it("whatever changes are made, every message stays in exactly one place and the path is a chain", () => {
        const op = fc.oneof(
            fc.record({ kind: fc.constant("append" as const), parent: fc.nat(40) }),
            fc.record({ kind: fc.constant("select" as const), target: fc.nat(40) }),
            fc.record({ kind: fc.constant("delete" as const), target: fc.nat(40) })
        );
        fc.assert(
            fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
                const chat = new ChatBranches();
                const made: string[] = [];
                let alive = new Set<string>();
                for (const [step, change] of ops.entries()) {
                    if (change.kind === "append") {
                        const id = `m-${step}`;
                        const parent = made.length === 0 || change.parent % 3 === 0 ? undefined : made[change.parent % made.length]!;
                        chat.append(user(id, step, parent));
                        made.push(id);
                        alive.add(id);
                    } else if (made.length > 0) {
                        const target = made[change.target % made.length]!;
                        if (change.kind === "select") {
                            expect(chat.select(target)).toBe(alive.has(target));
                        } else {
                            expect(chat.delete(target)).toBe(alive.has(target));
                            alive = new Set([...alive].filter((id) => id !== target));
                        }
                    }
                }
                const { messages, branches } = chat.toChat();
                const all = [...messages, ...branches].map((message) => message.id).sort();
                expect(all).toEqual([...alive].sort());
                expect(chat.size).toBe(alive.size);
                // Each path message after the first either names the one before it or names none; no off-path message names a stranger.
                for (const [index, message] of messages.entries()) {
                    if (message.parent !== undefined) {
                        expect(message.parent).toBe(messages[index - 1]?.id ?? null);
                    }
                }
                for (const message of branches) {
                    expect(message.parent === null || alive.has(message.parent!)).toBe(true);
                }
                // A non-empty chat always shows something.
                expect(messages.length > 0 || alive.size === 0).toBe(true);
            })
        );
    });
});

describe("branchPositions", () => {
    it("says what position() says, for every message shown", () => {
        const chat = regenerated();
        chat.append(user("u2b", 5, "a2"));
        const positions = branchPositions(chat.toChat());
        for (const message of chat.toChat().messages) {
            expect(positions.get(message.id)).toEqual(chat.position(message.id));
        }
        expect(positions.get("a2")).toMatchObject({ index: 2, count: 2 });
        expect(positions.get("u1")).toMatchObject({ index: 1, count: 1 });
    });
});
