import { Boxes, MemoryStick, MessagesSquare, Server, Settings, ShieldCheck, type LucideIcon } from "lucide-react";

/** The rail's views, in its order (App.tsx mounts one section per view). */
export type AppView = "chats" | "models" | "memory" | "isolation" | "server" | "settings";

export interface AppViewEntry {
    readonly id: AppView;
    readonly label: string;
    readonly icon: LucideIcon;
    /** The digit that, with Alt, opens the view (useAppShortcuts). */
    readonly digit: number;
}

export const APP_VIEWS: readonly AppViewEntry[] = [
    { id: "chats", label: "Chats", icon: MessagesSquare, digit: 1 },
    { id: "models", label: "Models", icon: Boxes, digit: 2 },
    { id: "memory", label: "Memory", icon: MemoryStick, digit: 3 },
    { id: "isolation", label: "Isolation", icon: ShieldCheck, digit: 4 },
    { id: "server", label: "Server", icon: Server, digit: 5 },
    { id: "settings", label: "Settings", icon: Settings, digit: 6 }
];
