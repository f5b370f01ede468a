import type { ChatTurnRequest } from "../../../contract/engineProtocol.js";
import type { RpcMethods } from "../../../contract/rpc.js";
import type { ConnectionStatus, KvaultRpc, PlainRpcMethod, TurnListener } from "../../../renderer/rpc/KvaultRpc.js";
import { RpcError } from "../../../renderer/rpc/RpcError.js";

type ChatResult = RpcMethods["chat"]["result"];

/** A turn the test drives by hand: events, then finish or fail. */
export interface FakeTurn {
    readonly request: ChatTurnRequest & { readonly answerId?: string; readonly answerParent?: string | null };
    readonly listener: TurnListener;
    finish(result: ChatResult): void;
    fail(code: string, message: string): void;
}

/** KvaultRpc without a server: records calls, answers plain calls from `answers`, hands chat turns to the test. */
export class FakeRpc implements KvaultRpc {
    status: ConnectionStatus = { kind: "open" };
    readonly calls: { method: string; params: unknown }[] = [];
    readonly turns: FakeTurn[] = [];
    readonly answers: Partial<{ [M in PlainRpcMethod]: (params: RpcMethods[M]["params"]) => RpcMethods[M]["result"] }> = {};
    readonly #statusListeners = new Set<(status: ConnectionStatus) => void>();

    onStatus(listener: (status: ConnectionStatus) => void): () => void {
        this.#statusListeners.add(listener);
        return () => this.#statusListeners.delete(listener);
    }

    setStatus(status: ConnectionStatus): void {
        this.status = status;
        for (const listener of this.#statusListeners) {
            listener(status);
        }
    }

    async call<M extends PlainRpcMethod>(method: M, params: RpcMethods[M]["params"]): Promise<RpcMethods[M]["result"]> {
        this.calls.push({ method, params });
        if (this.status.kind !== "open") {
            throw new RpcError("not_connected", "Not connected.");
        }
        const answer = this.answers[method] as ((params: RpcMethods[M]["params"]) => RpcMethods[M]["result"]) | undefined;
        if (answer === undefined) {
            throw new RpcError("not_implemented", `FakeRpc has no answer for ${method}.`);
        }
        return answer(params);
    }

    chat(
        request: ChatTurnRequest & { readonly answerId?: string; readonly answerParent?: string | null },
        listener: TurnListener
    ): Promise<ChatResult> {
        this.calls.push({ method: "chat", params: request });
        return new Promise((resolve, reject) => {
            this.turns.push({
                request,
                listener,
                finish: resolve,
                fail: (code, message) => reject(new RpcError(code, message))
            });
        });
    }

    /** Turns attached to (attachTurn), driven by hand like `turns`. */
    readonly attached: {
        readonly requestId: string;
        readonly listener: TurnListener;
        finish(result: ChatResult): void;
        fail(code: string, message: string): void;
    }[] = [];

    attach(requestId: string, listener: TurnListener): Promise<ChatResult> {
        this.calls.push({ method: "attachTurn", params: { requestId } });
        return new Promise((resolve, reject) => {
            this.attached.push({ requestId, listener, finish: resolve, fail: (code, message) => reject(new RpcError(code, message)) });
        });
    }

    dispose(): void {}
}

/** Lets pending promise callbacks run. */
export function settle(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, 0));
}

export const usage = { promptTokens: 10, cachedPromptTokens: 0, evaluatedPromptTokens: 10, completionTokens: 3 } as const;
