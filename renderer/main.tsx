import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
import { AppServicesContext, type AppServices } from "./AppServices.js";
import { ChatController } from "./chat/ChatController.js";
import { IsolationController } from "./isolation/IsolationController.js";
import { ModelController } from "./model/ModelController.js";
import { connectRpc } from "./rpc/connectRpc.js";
import { useDraftStore } from "./stores/draftStore.js";
import { useEngineStore } from "./stores/engineStore.js";
import { useIsolationStore } from "./stores/isolationStore.js";
import { useModelStore } from "./stores/modelStore.js";
import { useStorageNoticeStore } from "./stores/storageNoticeStore.js";
import { useTurnStore } from "./stores/turnStore.js";
import { useWorkspaceStore } from "./stores/workspaceStore.js";
import { WorkspaceSync } from "./workspaces/WorkspaceSync.js";
import "./App.css";

const container = document.getElementById("root");
if (container === null) {
    throw new Error('renderer/index.html has no element with id "root" to render into.');
}

// Made once per page, outside React: turns keep running whatever is on screen.
const rpc = connectRpc();
const services: AppServices = {
    rpc,
    chat: new ChatController(rpc, { workspaces: useWorkspaceStore, turns: useTurnStore, drafts: useDraftStore }),
    isolation: new IsolationController(rpc, { isolation: useIsolationStore, turns: useTurnStore }),
    model: new ModelController(rpc, { model: useModelStore, engine: useEngineStore, turns: useTurnStore })
};
// Loads the host's workspaces once connected (making a first one if there are none) and saves every change through the RPC.
new WorkspaceSync(rpc, { workspaces: useWorkspaceStore, notices: useStorageNoticeStore });

createRoot(container).render(
    <StrictMode>
        <AppServicesContext.Provider value={services}>
            <App />
        </AppServicesContext.Provider>
    </StrictMode>
);
