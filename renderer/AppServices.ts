import { createContext, useContext } from "react";
import type { ChatController } from "./chat/ChatController.js";
import type { IsolationController } from "./isolation/IsolationController.js";
import type { ModelController } from "./model/ModelController.js";
import type { KvaultRpc } from "./rpc/KvaultRpc.js";

/** What the page makes once, outside React, and hands down: the RPC, the chat's, the isolation panel's and the model manager's actions. */
export interface AppServices {
    readonly rpc: KvaultRpc;
    readonly chat: ChatController;
    readonly isolation: IsolationController;
    readonly model: ModelController;
}

export const AppServicesContext = createContext<AppServices | undefined>(undefined);

export function useAppServices(): AppServices {
    const services = useContext(AppServicesContext);
    if (services === undefined) {
        throw new Error("useAppServices needs an AppServicesContext provider above it (renderer/main.tsx provides one).");
    }
    return services;
}
