// node-llama-cpp writes an enum (and a oneOf of consts) as one alternation of whole literals,
// `( val0 | val1 | … )`, and llama.cpp's grammar sampler keeps one parse stack per alternative
// until its text parts, checking every token of the vocabulary against each: an enum of thousands
// of values that start alike holds every stream of the context for seconds a token. Written as a
// trie of its characters instead (`"\"" ( "U" ( "SD\"" | "SN\"" ) | "EUR\"" )`), the same language
// keeps at most one stack per distinct next character. grammarAmbiguity counts literals this way.

/** A literal's text as llama.cpp reads a GBNF string (its escapes), or undefined for a form this does not read. */
function decodeLiteral(source: string): string | undefined {
    if (!/^"(?:[^"\\]|\\.)*"$/su.test(source)) {
        return undefined;
    }
    const simple: Record<string, string> = { n: "\n", r: "\r", t: "\t", "\\": "\\", '"': '"', "[": "[", "]": "]" };
    let text = "";
    const body = source.slice(1, -1);
    for (let at = 0; at < body.length; at++) {
        const char = body[at]!;
        if (char !== "\\") {
            text += char;
            continue;
        }
        const escape = body[at + 1]!;
        const width = escape === "x" ? 2 : escape === "u" ? 4 : escape === "U" ? 8 : 0;
        if (width > 0) {
            const hex = body.slice(at + 2, at + 2 + width);
            if (!/^[0-9a-fA-F]+$/u.test(hex) || hex.length !== width) {
                return undefined;
            }
            text += String.fromCodePoint(Number.parseInt(hex, 16));
            at += 1 + width;
        } else if (simple[escape] !== undefined) {
            text += simple[escape];
            at += 1;
        } else {
            return undefined;
        }
    }
    return text;
}

/** `text` as a GBNF literal: quotes and backslashes escaped, control characters as \x escapes. */
function encodeLiteral(text: string): string {
    let escaped = "";
    for (const char of text) {
        const code = char.codePointAt(0)!;
        escaped +=
            char === "\\" || char === '"' ? `\\${char}` : code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, "0")}` : char;
    }
    return `"${escaped}"`;
}

interface TrieNode {
    readonly children: Map<string, TrieNode>;
    ends: boolean;
}

/** The literals as the alternatives of one GBNF group, shared starts written once: each point of it keeps one alternative per distinct next character. */
export function literalTrie(literals: readonly string[]): string[] {
    const root: TrieNode = { children: new Map(), ends: false };
    for (const literal of literals) {
        let at = root;
        for (const char of literal) {
            let next = at.children.get(char);
            if (next === undefined) {
                next = { children: new Map(), ends: false };
                at.children.set(char, next);
            }
            at = next;
        }
        at.ends = true;
    }
    return branchesOf(root);
}

/** A node's continuations, one per distinct next character: a run of single children as one literal, then the fork it reaches. */
function branchesOf(node: TrieNode): string[] {
    return [...node.children].map(([char, child]) => {
        let run = char;
        let at = child;
        while (!at.ends && at.children.size === 1) {
            const [nextChar, next] = at.children.entries().next().value!;
            run += nextChar;
            at = next;
        }
        const rest = writeFork(at);
        return rest === "" ? encodeLiteral(run) : `${encodeLiteral(run)} ${rest}`;
    });
}

/** A node as what may follow it: nothing where a literal ends without going on, optional where one ends and others go on. */
function writeFork(node: TrieNode): string {
    const branches = branchesOf(node);
    if (branches.length === 0) {
        return "";
    }
    const group = branches.length === 1 && !node.ends ? branches[0]! : `( ${branches.join(" | ")} )`;
    return node.ends ? `${group}?` : group;
}

/**
 * `grammar` (node-llama-cpp's GBNF for a JSON schema) with every rule that is an alternation of
 * two or more literals (inline, or rules whose whole body is one literal) rewritten so that its
 * literals form one trie; other alternatives of the same rule stay as they were, and a grammar
 * with nothing to factor comes back unchanged.
 */
export function factorLiteralAlternatives(grammar: string): string {
    const lines = grammar.split("\n");
    const literalRules = new Map<string, string>();
    for (const line of lines) {
        const match = /^([\w-]+) ::= ("(?:[^"\\]|\\.)*")\s*$/su.exec(line);
        const text = match === null ? undefined : decodeLiteral(match[2]!);
        if (text !== undefined) {
            literalRules.set(match![1]!, text);
        }
    }
    return lines
        .map((line) => {
            const match = /^([\w-]+) ::= \( (.*) \)\s*$/su.exec(line);
            if (match === null) {
                return line;
            }
            const alternatives = match[2]!.split(" | ");
            const literals: string[] = [];
            const others: string[] = [];
            for (const alternative of alternatives) {
                const text = literalRules.get(alternative) ?? decodeLiteral(alternative);
                if (text !== undefined && text !== "") {
                    literals.push(text);
                } else {
                    others.push(alternative);
                }
            }
            // a body that split on " | " inside a literal or a group is not a flat alternation: left as it was
            if (literals.length < 2 || others.some((other) => !/^[\w-]+$/u.test(other))) {
                return line;
            }
            return `${match[1]} ::= ( ${[...literalTrie(literals), ...others].join(" | ")} )`;
        })
        .join("\n");
}
