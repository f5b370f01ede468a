import { keyIdOf } from "./ApiKeys.js";
import { OpenAiError } from "./OpenAiError.js";

/** Who holds a place: a key's namespace (ApiKeys), or undefined for the default key. */
export type PlaceHolder = string | undefined;

/**
 * The one count of API requests in flight (running or queued in the engine), shared by every
 * endpoint that reaches the engine or a backend: past `max`, a new one is a 429 with Retry-After.
 * The places are shared fairly among the keys: a key holds at most `max` divided among the keys
 * busy now and one more that may come (never more keys than `numKeys()` says exist), so one key
 * sending without pause leaves room for another's request instead of a 429 for everyone else.
 * With one key (the default key alone) it may take every place.
 */
export class InFlightLimit {
    #count = 0;
    /** Places held by each key with any; the default key under DEFAULT_HOLDER. */
    readonly #held = new Map<string, number>();

    constructor(
        readonly max: number,
        /** How many keys the server takes now: the default key and its extra keys. */
        private readonly numKeys: () => number = () => 1
    ) {}

    get count(): number {
        return this.#count;
    }

    /** The most places `holder` may hold now: `max` divided among numSharing keys, at least 1. */
    shareOf(holder: PlaceHolder): number {
        return Math.max(1, Math.floor(this.max / this.#numSharing(holder)));
    }

    /** The keys busy now (`holder` among them) and one more that may come, but never more than there are. */
    #numSharing(holder: PlaceHolder): number {
        const numBusy = this.#held.size + (this.#held.has(holderKey(holder)) ? 0 : 1);
        return Math.min(Math.max(1, this.numKeys()), numBusy + 1);
    }

    /** Takes a place for `holder`, or throws the 429; the release it returns gives the place back once, however often it is called. */
    admit(holder: PlaceHolder): () => void {
        if (this.#count >= this.max) {
            throw new OpenAiError(
                429,
                `${this.#count} requests are already running or queued, the most this server takes. Retry in a moment.`,
                "rate_limit_error",
                "queue_full",
                null,
                1
            );
        }
        const key = holderKey(holder);
        const held = this.#held.get(key) ?? 0;
        const share = this.shareOf(holder);
        if (held >= share) {
            throw new OpenAiError(
                429,
                `${holder === undefined ? "The default key" : `The key "${keyIdOf(holder)}"`} has ${held} requests running or queued, its share of this server's ${this.max} places, which are shared among ${this.#numSharing(holder)} keys (those busy now and one more that may come; ${this.#count} in flight in all). Retry when one of its requests ends, or send fewer at once.`,
                "rate_limit_error",
                "key_share_full",
                null,
                1
            );
        }
        this.#count++;
        this.#held.set(key, held + 1);
        let released = false;
        return () => {
            if (released) {
                return;
            }
            released = true;
            this.#count--;
            const left = (this.#held.get(key) ?? 1) - 1;
            if (left === 0) {
                this.#held.delete(key);
            } else {
                this.#held.set(key, left);
            }
        };
    }
}

/** The default key's entry in the count by key: no namespace is empty. */
const DEFAULT_HOLDER = "";

function holderKey(holder: PlaceHolder): string {
    return holder ?? DEFAULT_HOLDER;
}
