import type { Page } from "playwright-core";

/**
 * One RPC call from the page, over a second WebSocket of its own (the page's session cookie and the
 * RPC token it keeps in localStorage, renderer/rpc/browserSession.ts): what
 * the server answers, to hold what the page shows against.
 */
export function rpcFromPage<T>(page: Page, method: string, params: Record<string, unknown> = {}): Promise<T> {
    return page.evaluate<T>(`new Promise((resolve, reject) => {
        const socket = new WebSocket((location.protocol === "https:" ? "wss:" : "ws:") + "//" + location.host + "/rpc?session_token=" + localStorage.getItem("kvault.sessionToken"));
        const timer = setTimeout(() => { socket.close(); reject(new Error(${JSON.stringify(method)} + " got no answer in 30 s")); }, 30000);
        socket.onopen = () => socket.send(JSON.stringify({ id: 1, method: ${JSON.stringify(method)}, params: ${JSON.stringify(params)} }));
        socket.onmessage = (event) => {
            const answer = JSON.parse(event.data);
            if (answer.id !== 1) return;
            clearTimeout(timer);
            socket.close();
            answer.error ? reject(new Error(answer.error.message)) : resolve(answer.result);
        };
        socket.onerror = () => { clearTimeout(timer); reject(new Error("the RPC connection failed")); };
    })`);
}
