import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import "./App.css";

const container = document.getElementById("root");
if (container === null) {
    throw new Error("renderer/index.html has no element with id \"root\" to render into.");
}

createRoot(container).render(
    <StrictMode>
        <App />
    </StrictMode>
);
