import { useEffect } from "react";
import { useAppServices } from "../AppServices.js";
import { ContextMeter } from "../meter/ContextMeter.js";
import { useDraftMeasurement } from "../meter/useDraftMeasurement.js";
import { WorkspaceHeader } from "../workspaces/WorkspaceHeader.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { WelcomeView } from "../shell/WelcomeView.js";
import { ChatModelPicker } from "./ChatModelPicker.js";
import { Composer } from "./Composer.js";
import { DemoModelNote } from "./DemoModelNote.js";
import { MessageList } from "./MessageList.js";
import "./ChatView.css";

/**
 * The selected workspace: its header and settings, the model that answers, the demo model's note and
 * the first run's welcome, chat, context meter and message box. Esc stops its answer while the chat is on screen.
 */
export function ChatView({ workspace }: { readonly workspace: Workspace }) {
    const { chat } = useAppServices();
    useDraftMeasurement(workspace);

    useEffect(() => {
        const onKeyDown = (event: KeyboardEvent): void => {
            const onScreen = document.getElementById("view-chats")?.hidden === false;
            if (event.key === "Escape" && !event.defaultPrevented && onScreen && document.querySelector("dialog[open]") === null) {
                chat.stop(workspace.id);
            }
        };
        document.addEventListener("keydown", onKeyDown);
        return () => document.removeEventListener("keydown", onKeyDown);
    }, [chat, workspace.id]);

    return (
        <section className="chat-view" aria-label={`Workspace ${workspace.name}`} data-workspace-id={workspace.id}>
            <WorkspaceHeader workspace={workspace} />
            <ChatModelPicker />
            <DemoModelNote />
            <WelcomeView workspace={workspace} />
            <MessageList workspace={workspace} />
            <ContextMeter workspace={workspace} />
            <Composer workspace={workspace} />
        </section>
    );
}
