// A turn's events as a test hears them: handed to a turn runner as its listener, read back in
// order, whole or by type.
import type { TurnEvent, TurnListener } from "../../contract/turnEvents.js";

/** Collects one turn's events in the order they came. */
export class TurnEventLog {
    readonly events: TurnEvent[] = [];

    /** What a test hands the runner; `then`, when given, sees each event after it is kept (a test that acts on the first text, say). */
    listener(then?: (event: TurnEvent) => void): TurnListener {
        return (event) => {
            this.events.push(event);
            then?.(event);
        };
    }

    /** The text events' text, in order. */
    get texts(): string[] {
        return this.events.flatMap((event) => (event.type === "text" ? [event.text] : []));
    }

    /** The queued events' 1-based places, in order. */
    get positions(): number[] {
        return this.events.flatMap((event) => (event.type === "queued" ? [event.position] : []));
    }

    /** Each event as a line: "queued 2", "started", "text Hel", "tool call" (a tool event by its kind). */
    get lines(): string[] {
        return this.events.map((event) => {
            switch (event.type) {
                case "queued":
                    return `queued ${event.position}`;
                case "started":
                    return "started";
                case "text":
                    return `text ${event.text}`;
                case "tool":
                    return `tool ${event.tool.kind}`;
            }
        });
    }

    /** The ids the events came under, each once, in order of first arrival. */
    get requestIds(): string[] {
        return [...new Set(this.events.map((event) => event.requestId))];
    }
}
