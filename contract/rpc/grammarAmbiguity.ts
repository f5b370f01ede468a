// How many alternatives of a JSON schema's grammar can be open at once. llama.cpp's grammar
// sampler keeps one parse stack per way the answer so far can still be read, and checks every
// candidate token against each of them, natively and without a way to stop; oneOf/anyOf branches
// that start with the same text each keep a stack, and nested inside one another they multiply
// (eight array branches six levels deep keep 8^6 stacks through the answer's `[[[[[[`). This
// bounds that count from the schema alone, conservatively, so that a schema that would hold the
// engine for minutes is refused before it is built, while unions whose branches start
// differently (nullable fields, a distinct first property, const tags, enums) count as what they
// are: one stack each until their text parts.
import { isRecord } from "./fieldSchemas.js";

/** At most this many alternatives open at once: a few hundred stacks cost a token milliseconds. */
export const MAX_OPEN_GRAMMAR_ALTERNATIVES = 512;

/** Counts stop growing here, so a hostile schema's product stays a finite number. */
const SATURATED = 1e12;

export interface GrammarAmbiguity {
    /** The most alternatives open at once anywhere in an answer (saturating at a trillion). */
    readonly numOpen: number;
    /** The innermost schema part whose count passes MAX_OPEN_GRAMMAR_ALTERNATIVES, with its count. */
    readonly firstOver?: { readonly path: string; readonly numOpen: number; readonly numBranches: number };
    /** A definition whose count grows with each level of its own recursion: no bound exists. */
    readonly unboundedAt?: string;
}

/** One way a union may go: the text all its answers start with (whitespace aside), and its count once past it. */
interface Alternative {
    readonly lead: string;
    readonly numOpen: number;
}

interface Definition {
    readonly node: Record<string, unknown>;
    readonly path: string;
    readonly scope: Scope;
}

type Scope = ReadonlyMap<string, Definition>;

/** Measures `schema`, one readGrammarSchema accepted (so its forms are known); the work is bounded by its size times its number of $defs. */
export function measureGrammarAmbiguity(schema: unknown): GrammarAmbiguity {
    const measure = new Measure();
    const numDefinitions = countDefinitions(schema);
    // Values only grow; a schema without a growing recursion settles within one round a definition, plus one to see it settled.
    for (let round = 0; round <= numDefinitions + 1; round++) {
        measure.startRound();
        const numOpen = measure.open(schema, "", new Map());
        if (!measure.changed) {
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
            return definition === undefined ? 1 : this.#openDefinition(definition);
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

    #openDefinition(definition: Definition): number {
        const key = definition.node;
        if (this.#done.has(key) || this.#inProgress.has(key)) {
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
                return [{ lead: lead(definition.node), numOpen: this.#openDefinition(definition) }];
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
            return node.enum.map((value) => ({ lead: literalLead(value), numOpen: 1 }));
        }
        if (Array.isArray(node.type) || node.type === "boolean") {
            const types = Array.isArray(node.type) ? node.type : [node.type];
            return types.flatMap((type) =>
                (type === "boolean" ? [true, false] : [undefined]).map((value) => ({
                    lead: value === undefined ? lead({ type }) : literalLead(value),
                    numOpen: 1
                }))
            );
        }
        return [{ lead: lead(node), numOpen: this.open(node, path, outer) }];
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
 * alternatives whose lead goes on past the point count one each, those whose lead ended at or
 * before it count their own worst.
 */
function worstPoint(alternatives: readonly Alternative[]): { numOpen: number; numBranches: number } {
    interface TrieNode {
        readonly children: Map<string, TrieNode>;
        numBelow: number;
        numEndingHere: number;
        sumEndingHere: number;
    }
    const newNode = (): TrieNode => ({ children: new Map(), numBelow: 0, numEndingHere: 0, sumEndingHere: 0 });
    const root = newNode();
    for (const { lead: text, numOpen } of alternatives) {
        let at = root;
        for (const char of text) {
            at.numBelow++;
            let next = at.children.get(char);
            if (next === undefined) {
                next = newNode();
                at.children.set(char, next);
            }
            at = next;
        }
        at.numEndingHere++;
        at.sumEndingHere = Math.min(SATURATED, at.sumEndingHere + numOpen);
    }
    let worst = { numOpen: 0, numBranches: 0 };
    const stack: { node: TrieNode; sumEnded: number; numEnded: number }[] = [{ node: root, sumEnded: 0, numEnded: 0 }];
    while (stack.length > 0) {
        const { node, sumEnded, numEnded } = stack.pop()!;
        const sum = Math.min(SATURATED, sumEnded + node.sumEndingHere);
        const ended = numEnded + node.numEndingHere;
        const numOpen = Math.min(SATURATED, sum + node.numBelow);
        if (numOpen > worst.numOpen) {
            worst = { numOpen, numBranches: ended + node.numBelow };
        }
        for (const child of node.children.values()) {
            stack.push({ node: child, sumEnded: sum, numEnded: ended });
        }
    }
    return worst;
}

function withDefinitions(node: Record<string, unknown>, path: string, outer: Scope): Scope {
    if (!isRecord(node.$defs)) {
        return outer;
    }
    const scope = new Map(outer);
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

function countDefinitions(node: unknown): number {
    if (Array.isArray(node)) {
        return node.reduce((sum: number, item) => sum + countDefinitions(item), 0);
    }
    if (!isRecord(node)) {
        return 0;
    }
    const own = isRecord(node.$defs) ? Object.keys(node.$defs).length : 0;
    return Object.values(node).reduce((sum: number, value) => sum + countDefinitions(value), own);
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
            reason: `refers to itself through oneOf/anyOf branches that start alike, so each level of its nesting multiplies the alternatives a grammar keeps open at once, without bound (Kvault allows at most ${limit}); ${reshape}.`
        };
    }
    const over = ambiguity.firstOver;
    if (over === undefined) {
        return undefined;
    }
    const format = (count: number) => (count >= SATURATED ? `over ${SATURATED.toLocaleString("en-US")}` : count.toLocaleString("en-US"));
    return {
        path: over.path,
        reason: `keeps ${format(over.numOpen)} alternatives open at once (${over.numBranches.toLocaleString("en-US")} branches that start alike, times those nested in them; ${format(ambiguity.numOpen)} in the whole schema), more than the ${limit} Kvault allows, since the grammar checks every token against each open alternative and cannot be stopped inside one; ${reshape}.`
    };
}
