import { useEngineStore } from "./stores/engineStore.js";

/** The connection to the server, and the engine's throughput while it is up. */
export function ConnectionBadge() {
    const connection = useEngineStore((state) => state.connection);
    const tokensPerSecond = useEngineStore((state) => state.snapshot?.tokensPerSecond);
    const text =
        connection.kind === "open"
            ? "Connected"
            : connection.kind === "connecting"
              ? "Connecting…"
              : connection.kind === "reconnecting"
                ? `Reconnecting (attempt ${connection.attempt})…`
                : "Not connected";
    return (
        <p className="connection-badge" role="status" data-connection={connection.kind}>
            <span className={`connection-dot connection-${connection.kind}`} aria-hidden="true" />
            {text}
            {connection.kind === "unavailable" && <span className="connection-reason">: {connection.reason}</span>}
            {connection.kind === "open" && tokensPerSecond !== undefined && (
                <span className="throughput"> · {tokensPerSecond.toFixed(1)} tokens/s</span>
            )}
        </p>
    );
}
