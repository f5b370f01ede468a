/**
 * Where a request is. One exhaustive type, one `isTerminal`: a rejected or cancelled request can
 * reach no transfer or decode step, because every step first asks whether the request is still live
 * (the 2026 incident recorded a rejection in a field the engine did not treat as finished).
 */
export type RequestStatus =
    | { readonly kind: "admitted" }
    | { readonly kind: "prefilling" }
    | { readonly kind: "transferring" }
    | { readonly kind: "decoding" }
    | { readonly kind: "finished"; readonly reason: "stop" | "length" }
    | { readonly kind: "rejected"; readonly error: Error }
    | { readonly kind: "cancelled" }
    | { readonly kind: "failed"; readonly error: Error };

/** The stages a request passes through after admission, before its terminal status. */
export type LiveStage = Extract<RequestStatus, { kind: "prefilling" | "transferring" | "decoding" }>;
export type TerminalStatus = Extract<RequestStatus, { kind: "finished" | "rejected" | "cancelled" | "failed" }>;

export function isTerminal(status: RequestStatus): status is TerminalStatus {
    switch (status.kind) {
        case "admitted":
        case "prefilling":
        case "transferring":
        case "decoding":
            return false;
        case "finished":
        case "rejected":
        case "cancelled":
        case "failed":
            return true;
    }
}
