import { useEffect, useRef } from "react";
import { composeMessage } from "../../contract/attachments.js";
import { useAttachedFiles } from "../attachments/attachmentStore.js";
import { useAppServices } from "../AppServices.js";
import { conversationKey, conversationMessages } from "../chat/conversationMessages.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useDraftStore } from "../stores/draftStore.js";
import { useEngineStore } from "../stores/engineStore.js";
import { backendValue } from "../workspaces/BackendSelect.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { remoteDraftMeasurement, remoteMissing, useRemoteMeterStore } from "./remoteMeter.js";

/** Pause after the last keystroke before measuring (ms). */
export const MEASURE_DEBOUNCE_MS = 200;

/**
 * Measures the workspace's draft against its conversation with the engine's own tokenizer (on a
 * remote backend: the server's, through measureRemote),
 * debounced, whenever either changes, and again when the engine's model or window does. Only the newest answer is kept, so a slow answer to an
 * older draft never overwrites a newer one.
 */
export function useDraftMeasurement(workspace: Workspace): void {
    const { rpc } = useAppServices();
    const draft = useDraftStore((state) => state.drafts[workspace.id] ?? "");
    const connected = useEngineStore((state) => state.connection.kind === "open");
    // A new engine (a model switch, a settings restart) has another window: measure again against it.
    const engine = useEngineStore((state) => (state.info === undefined ? "" : `${state.info.modelPath}|${state.info.window.limit}`));
    const key = conversationKey(workspace);
    const remote = backendValue(workspace);
    const latestCall = useRef(0);
    // The attached files are part of the message: measured with it, so the meter counts them.
    const files = useAttachedFiles(workspace.id);

    useEffect(() => {
        if (!connected) {
            return;
        }
        const call = ++latestCall.current;
        const timer = setTimeout(() => {
            const messages = conversationMessages(workspace);
            const sent = composeMessage(
                files.map((file) => file.block),
                draft
            );
            if (remote !== "") {
                // On a backend: the server's own tokenizer and window, each with its source (host/backends/remoteMeters.ts).
                rpc.call("measureRemote", { workspace: workspace.id, messages, draft: sent }).then(
                    (measured) => {
                        if (call !== latestCall.current) {
                            return;
                        }
                        useRemoteMeterStore.getState().set(measured);
                        const result = remoteDraftMeasurement(measured);
                        if (result === undefined) {
                            useDraftStore.getState().setMeasureError(workspace.id, remoteMissing(measured));
                        } else {
                            useDraftStore.getState().setMeasured(workspace.id, { draft, conversationKey: key, result });
                        }
                    },
                    (error: unknown) => {
                        if (call === latestCall.current) {
                            useDraftStore.getState().setMeasureError(workspace.id, toRpcError(error).message);
                        }
                    }
                );
                return;
            }
            // `key` stands for the messages: when they change, this effect runs again.
            rpc.call("measure", { workspace: workspace.id, messages, draft: sent }).then(
                (result) => {
                    if (call === latestCall.current) {
                        useDraftStore.getState().setMeasured(workspace.id, { draft, conversationKey: key, result });
                    }
                },
                (error: unknown) => {
                    if (call === latestCall.current) {
                        useDraftStore.getState().setMeasureError(workspace.id, toRpcError(error).message);
                    }
                }
            );
        }, MEASURE_DEBOUNCE_MS);
        return () => clearTimeout(timer);
        // `workspace` itself is left out on purpose: `key` changes exactly when its messages do.
        // Its localModel too: choosing another model measures the draft again with that model.
    }, [rpc, workspace.id, workspace.localModel, draft, key, connected, remote, engine, files]);
}
