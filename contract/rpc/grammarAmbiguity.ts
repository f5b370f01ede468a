// How many parse stacks of a JSON schema's grammar can be open at once. llama.cpp's grammar
// sampler keeps one parse stack per way the answer so far can still be read, and checks every
// candidate token against each of them, natively and without a way to stop; oneOf/anyOf branches
// that start with the same text each keep a stack, and nested inside one another they multiply
// (eight array branches six levels deep keep 8^6 and more through the answer's `[[[[[[`). This
// bounds that count from the schema alone, so that a schema that would hold the engine for
// minutes is refused before it is built, while unions whose branches start differently (nullable
// fields, a distinct first property, const tags) count as what they are: one stack each until
// their text parts, then about STACKS_WHERE_TEXT_BEGINS for the one that goes on. The engine
// writes a union's literals (enum values, consts) as one trie of their characters
// (factorLiteralAlternatives), so those count one stack per distinct next character, not one per value.
import { isRecord } from "./fieldSchemas.js";

/**
 * At most this many parse stacks open at once: each may check every token of the vocabulary,
 * natively, inside the step every stream of the context waits for; chosen from
 * `npm run bench -- grammar` on a real vocabulary (docs/measurements.md).
 */
export const MAX_OPEN_GRAMMAR_ALTERNATIVES = 32;

/**
 * The stacks a union's branch keeps where its own text begins, past the lead it shares: a string's
 * three kinds of character, a number's sign and digits, each behind optional whitespace; what the
 * benchmark's costs per branch came to, against one stack per literal character.
 */
const STACKS_WHERE_TEXT_BEGINS = 4;

/** Rounds over a recursive schema before a count still growing is taken as unbounded: bounds the work a hostile schema costs. */
const MAX_ROUNDS = 8;

/** Definitions walked inside one another at most; deeper ones count as the round before counted them. */
const MAX_NESTED_DEFINITIONS = 16;

/** Counts stop growing here, so a hostile schema's product stays a finite number. */
const SATURATED = 1e12;

export interface GrammarAmbiguity {
    /** The most parse stacks open at once anywhere in an answer (saturating at a trillion). */
    readonly numOpen: number;
    /** The innermost schema part whose count passes MAX_OPEN_GRAMMAR_ALTERNATIVES, with its count. */
    readonly firstOver?: { readonly path: string; readonly numOpen: number; readonly numBranches: number };
    /** A definition whose count grows with each level of its own recursion: no bound exists. */
    readonly unboundedAt?: string;
}

/**
 * One way a union may go: the text all its answers start with (whitespace aside), and its count
 * once past it; a literal (an enum value, a const) is the whole of its text and shares a trie with
 * the union's other literals.
 */
interface Alternative {
    readonly lead: string;
    readonly numOpen: number;
    readonly literal?: boolean;
}

interface Definition {
    readonly node: Record<string, unknown>;
    readonly path: string;
    readonly scope: Scope;
}

type Scope = ReadonlyMap<string, Definition>;

/** Measures `schema`, one readGrammarSchema accepted (so its forms are known); the work is at most MAX_ROUNDS + 2 walks of it. */
export function measureGrammarAmbiguity(schema: unknown): GrammarAmbiguity {
    const measure = new Measure();
    const definitions: Definition[] = [];
    collectDefinitions(schema, "", new Map(), definitions);
    // Values only grow, and each round follows every recursion once more: a schema whose recursion
    // does not multiply settles within a round per definition on it, plus one to see it settled.
    const numRounds = Math.min(definitions.length, MAX_ROUNDS) + 2;
    for (let round = 0; round < numRounds; round++) {
        measure.startRound();
        const numOpen = measure.open(schema, "", new Map());
        // every definition is walked each round, also those only reached past MAX_NESTED_DEFINITIONS
        for (const definition of definitions) {
            measure.openDefinition(definition);
        }
        // counts only grow, so one past the limit is a refusal whether or not the rest has settled
        if (!measure.changed || measure.firstOver !== undefined) {
            return measure.firstOver === undefined ? { numOpen } : { numOpen, firstOver: measure.firstOver };
        }
    }
    return { numOpen: SATURATED, unboundedAt: measure.lastChanged ?? "" };
}

class Measure {
    // by the definition's own object, which stays the same however often its scope is rebuilt
    readonly #estimates = new Map<object, number>();
    readonly #done = new Set<object>();
    readonly #inProgress = new Set<object>();
    changed = false;
    lastChanged: string | undefined;
    firstOver: { path: string; numOpen: number; numBranches: number } | undefined;

    startRound(): void {
        this.#done.clear();
        this.changed = false;
        this.firstOver = undefined;
    }

    /** The most stacks open at once inside an answer of `node`. */
    open(node: unknown, path: string, outer: Scope): number {
        if (!isRecord(node)) {
            return 1;
        }
        const scope = withDefinitions(node, path, outer);
        if (typeof node.$ref === "string") {
            const definition = resolve(node.$ref, scope);
            return definition === undefined ? 1 : this.openDefinition(definition);
        }
        if (isUnion(node)) {
            return this.#openUnion(node, path, scope);
        }
        let numOpen = 1;
        const inner = (child: unknown, childPath: string) => {
            numOpen = Math.max(numOpen, this.open(child, childPath, scope));
        };
        if (isRecord(node.properties)) {
            for (const [name, value] of Object.entries(node.properties)) {
                inner(value, `${path}.properties.${name}`);
            }
        }
        if (isRecord(node.additionalProperties)) {
            inner(node.additionalProperties, `${path}.additionalProperties`);
        }
        if (node.items !== undefined) {
            inner(node.items, `${path}.items`);
        }
        if (Array.isArray(node.prefixItems)) {
            node.prefixItems.forEach((item, index) => inner(item, `${path}.prefixItems[${index}]`));
        }
        return numOpen;
    }

    /** A definition's count, walked once a round; the last round's estimate inside its own walk or past MAX_NESTED_DEFINITIONS. */
    openDefinition(definition: Definition): number {
        const key = definition.node;
        // past MAX_NESTED_DEFINITIONS the walk takes the last round's estimate, as for a recursion, so the stack stays shallow
        if (this.#done.has(key) || this.#inProgress.has(key) || this.#inProgress.size >= MAX_NESTED_DEFINITIONS) {
            return this.#estimates.get(key) ?? 1;
        }
        this.#inProgress.add(key);
        const numOpen = this.open(definition.node, definition.path, definition.scope);
        this.#inProgress.delete(key);
        this.#done.add(key);
        if (this.#estimates.get(key) !== numOpen) {
            this.changed = true;
            this.lastChanged = definition.path;
            this.#estimates.set(key, numOpen);
        }
        return numOpen;
    }

    /**
     * A union's count at the worst point of its text: the alternatives still inside a lead that
     * point's text begins (one stack each) plus the counts of those whose lead it has passed.
     */
    #openUnion(node: Record<string, unknown>, path: string, scope: Scope): number {
        const alternatives = this.#alternatives(node, path, scope, new Set());
        const worst = worstPoint(alternatives);
        if (worst.numOpen > MAX_OPEN_GRAMMAR_ALTERNATIVES && this.firstOver === undefined) {
            this.firstOver = { path, numOpen: worst.numOpen, numBranches: worst.numBranches };
        }
        return worst.numOpen;
    }

    /** A union flattened into its alternatives, as the grammar's one alternation holds them. */
    #alternatives(node: unknown, path: string, outer: Scope, flattening: Set<object>): Alternative[] {
        if (!isRecord(node)) {
            return [{ lead: "", numOpen: 1 }];
        }
        const scope = withDefinitions(node, path, outer);
        if (typeof node.$ref === "string") {
            const definition = resolve(node.$ref, scope);
            if (definition === undefined) {
                return [{ lead: "", numOpen: 1 }];
            }
            if (!isUnion(definition.node) && typeof definition.node.$ref !== "string") {
                return [{ lead: lead(definition.node), numOpen: this.openDefinition(definition) }];
            }
            if (flattening.size >= MAX_NESTED_DEFINITIONS) {
                return [{ lead: "", numOpen: this.openDefinition(definition) }];
            }
            if (flattening.has(definition.node)) {
                // a union that is its own alternative before any text: every answer can be read a new way
                return [{ lead: "", numOpen: SATURATED }];
            }
            flattening.add(definition.node);
            const inner = this.#alternatives(definition.node, definition.path, definition.scope, flattening);
            flattening.delete(definition.node);
            return inner;
        }
        const branches = node.oneOf ?? node.anyOf;
        if (Array.isArray(branches)) {
            const key = node.oneOf !== undefined ? "oneOf" : "anyOf";
            return branches.flatMap((branch, index) => this.#alternatives(branch, `${path}.${key}[${index}]`, scope, flattening));
        }
        if (Array.isArray(node.enum)) {
            return node.enum.map((value) => ({ lead: literalLead(value), numOpen: 1, literal: true }));
        }
        if (Array.isArray(node.type) || node.type === "boolean") {
            const types = Array.isArray(node.type) ? node.type : [node.type];
            return types.flatMap((type) =>
                (type === "boolean" ? [true, false] : [undefined]).map((value) =>
                    value === undefined ? { lead: lead({ type }), numOpen: 1 } : { lead: literalLead(value), numOpen: 1, literal: true }
                )
            );
        }
        return [{ lead: lead(node), numOpen: this.open(node, path, outer), ...(node.const !== undefined ? { literal: true } : {}) }];
    }
}

function isUnion(node: unknown): boolean {
    return (
        isRecord(node) &&
        (Array.isArray(node.oneOf) ||
            Array.isArray(node.anyOf) ||
            Array.isArray(node.enum) ||
            Array.isArray(node.type) ||
            node.type === "boolean")
    );
}

/** The text every answer of a non-union schema starts with, whitespace aside; numbers lead with "0" so that they meet numeric literals. */
function lead(node: unknown): string {
    if (!isRecord(node)) {
        return "";
    }
    if (node.const !== undefined) {
        return literalLead(node.const);
    }
    switch (node.type) {
        case "string":
            return '"';
        case "number":
        case "integer":
            return "0";
        case "null":
            return "null";
        case "array":
            return "[";
        case "object": {
            // node-llama-cpp writes every listed property, in order, so the first one's key (and a const tag's value) starts every answer
            const first = isRecord(node.properties) ? Object.entries(node.properties)[0] : undefined;
            return first === undefined ? "{" : `{${JSON.stringify(first[0])}:${lead(first[1])}`;
        }
        default:
            return "";
    }
}

function literalLead(value: unknown): string {
    return typeof value === "number" ? `0${JSON.stringify(value)}` : (JSON.stringify(value) ?? "");
}

/**
 * The worst point of a union's text, over every prefix of its alternatives' leads (a trie): the
 * alternatives whose lead goes on past the point count one each, except literals, which count one
 * per distinct next character among them (the engine's trie of them); those whose lead ended at or
 * before it count their own worst, at least STACKS_WHERE_TEXT_BEGINS unless they are literals.
 */
function worstPoint(alternatives: readonly Alternative[]): { numOpen: number; numBranches: number } {
    interface TrieNode {
        readonly children: Map<string, TrieNode>;
        numBelow: number;
        hasLiteralBelow: boolean;
        numEndingHere: number;
        sumEndingHere: number;
    }
    const newNode = (): TrieNode => ({ children: new Map(), numBelow: 0, hasLiteralBelow: false, numEndingHere: 0, sumEndingHere: 0 });
    const root = newNode();
    for (const { lead: text, numOpen, literal = false } of alternatives) {
        let at = root;
        for (const char of text) {
            if (!literal) {
                at.numBelow++;
            }
            let next = at.children.get(char);
            if (next === undefined) {
                next = newNode();
                at.children.set(char, next);
            }
            next.hasLiteralBelow ||= literal;
            at = next;
        }
        at.numEndingHere++;
        at.sumEndingHere = Math.min(SATURATED, at.sumEndingHere + (literal ? numOpen : Math.max(numOpen, STACKS_WHERE_TEXT_BEGINS)));
    }
    let worst = { numOpen: 0, numBranches: 0 };
    const stack: { node: TrieNode; sumEnded: number; numEnded: number }[] = [{ node: root, sumEnded: 0, numEnded: 0 }];
    while (stack.length > 0) {
        const { node, sumEnded, numEnded } = stack.pop()!;
        const sum = Math.min(SATURATED, sumEnded + node.sumEndingHere);
        const ended = numEnded + node.numEndingHere;
        let numLiteralStarts = 0;
        for (const child of node.children.values()) {
            numLiteralStarts += child.hasLiteralBelow ? 1 : 0;
        }
        const numOpen = Math.min(SATURATED, sum + node.numBelow + numLiteralStarts);
        if (numOpen > worst.numOpen) {
            worst = { numOpen, numBranches: ended + node.numBelow + numLiteralStarts };
        }
        for (const child of node.children.values()) {
            stack.push({ node: child, sumEnded: sum, numEnded: ended });
        }
    }
    return worst;
}

/** The scope each node with $defs opens, made once: a node of parsed JSON has one place, so one scope. */
const scopes = new WeakMap<object, Scope>();

function withDefinitions(node: Record<string, unknown>, path: string, outer: Scope): Scope {
    if (!isRecord(node.$defs)) {
        return outer;
    }
    const known = scopes.get(node);
    if (known !== undefined) {
        return known;
    }
    const scope = new Map(outer);
    scopes.set(node, scope);
    for (const [name, definition] of Object.entries(node.$defs)) {
        if (isRecord(definition)) {
            scope.set(name, { node: definition, path: `${path}.$defs.${name}`, scope });
        }
    }
    return scope;
}

function resolve(ref: string, scope: Scope): Definition | undefined {
    return ref.startsWith("#/$defs/") ? scope.get(ref.slice("#/$defs/".length)) : undefined;
}

function collectDefinitions(node: unknown, path: string, outer: Scope, into: Definition[]): void {
    if (Array.isArray(node)) {
        node.forEach((item, index) => collectDefinitions(item, `${path}[${index}]`, outer, into));
        return;
    }
    if (!isRecord(node)) {
        return;
    }
    const scope = withDefinitions(node, path, outer);
    for (const [key, value] of Object.entries(node)) {
        if (key === "$defs" && isRecord(value)) {
            for (const name of Object.keys(value)) {
                const definition = scope.get(name);
                if (definition !== undefined && definition.node === value[name]) {
                    into.push(definition);
                    collectDefinitions(definition.node, definition.path, scope, into);
                }
            }
        } else if (key !== "enum" && key !== "const") {
            collectDefinitions(value, `${path}.${key}`, scope, into);
        }
    }
}

/**
 * Where and why `schema` opens too many alternatives at once, as a sentence for its sender: the
 * counts, the limit, and how to reshape it; undefined when it is within the limit.
 */
export function ambiguityRefusal(schema: unknown): { readonly path: string; readonly reason: string } | undefined {
    const ambiguity = measureGrammarAmbiguity(schema);
    const limit = MAX_OPEN_GRAMMAR_ALTERNATIVES.toLocaleString("en-US");
    const reshape =
        "make the alternatives start differently (a different first property, or a const tag first) or nest fewer oneOf/anyOf inside one another";
    if (ambiguity.unboundedAt !== undefined) {
        return {
            path: ambiguity.unboundedAt,
            reason: `refers to itself through oneOf/anyOf branches that start alike, so each level of its nesting multiplies the parse stacks a grammar keeps open at once, without bound (Kvault allows at most ${limit}); ${reshape}.`
        };
    }
    const over = ambiguity.firstOver;
    if (over === undefined) {
        return undefined;
    }
    const format = (count: number) => (count >= SATURATED ? `over ${SATURATED.toLocaleString("en-US")}` : count.toLocaleString("en-US"));
    return {
        path: over.path,
        reason: `keeps about ${format(over.numOpen)} parse stacks open at once (${over.numBranches.toLocaleString("en-US")} branches that start alike, times those nested in them and the ways each one's own text can begin; ${format(ambiguity.numOpen)} in the whole schema), more than the ${limit} Kvault allows, since the grammar checks every token against each open stack and cannot be stopped inside one; ${reshape}.`
    };
}
