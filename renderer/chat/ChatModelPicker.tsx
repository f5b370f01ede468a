import { useState } from "react";
import { Cpu } from "lucide-react";
import { DEMO_MODEL } from "../../contract/models.js";
import { useAppServices } from "../AppServices.js";
import { estimateText, libraryName } from "../model/modelText.js";
import { useEngineStore } from "../stores/engineStore.js";
import { useModelStore } from "../stores/modelStore.js";
import { isDemoModel } from "./demoModelSelectors.js";
import "./ChatModelPicker.css";

/**
 * The chat header's model: what answers here (the demo model said to be one), and a switch to
 * another model of the library or the demo. Choosing one shows its memory plan (the model panel's
 * inspection) before Load, which switches the engine's model (switchModel) for every chat.
 */
export function ChatModelPicker() {
    const { model: controller } = useAppServices();
    const info = useEngineStore((state) => state.info);
    const library = useModelStore((state) => state.library.models);
    const inspection = useModelStore((state) => state.inspection);
    const loading = useModelStore((state) => state.loading);
    const [choice, setChoice] = useState("");
    const demo = isDemoModel(info);
    const planned = choice !== "" && choice !== DEMO_MODEL && inspection.path === choice ? inspection.facts : undefined;

    return (
        <div className="chat-model" data-model-name={info?.modelName ?? ""}>
            <Cpu aria-hidden="true" size={14} />
            <span className="chat-model-name" title={info?.modelPath}>
                {info === undefined ? "Waiting for the engine…" : info.modelName}
            </span>
            {demo && <span className="chat-model-badge">demo model: random weights, noise answers</span>}
            <select
                aria-label="Switch the model"
                value={choice}
                disabled={loading.running}
                onChange={(event) => {
                    const next = event.currentTarget.value;
                    setChoice(next);
                    if (next !== "" && next !== DEMO_MODEL) {
                        void controller.inspect(next);
                    }
                }}
            >
                <option value="">Switch model…</option>
                {library
                    .filter((entry) => !entry.missing && entry.path !== info?.modelPath)
                    .map((entry) => (
                        <option key={entry.id} value={entry.path}>
                            {libraryName(entry)}
                        </option>
                    ))}
                {!demo && <option value={DEMO_MODEL}>The built-in demo model</option>}
            </select>
            {choice !== "" && (
                <button
                    type="button"
                    disabled={loading.running || (choice !== DEMO_MODEL && planned === undefined)}
                    onClick={() => void controller.load(choice).then((loaded) => loaded && setChoice(""))}
                    aria-label="Load the chosen model"
                >
                    {loading.running ? "Loading…" : "Load"}
                </button>
            )}
            {planned !== undefined && (
                <p className="chat-model-plan" data-fact="chat-model-plan">
                    {estimateText(planned)}
                </p>
            )}
            {choice !== "" && inspection.path === choice && inspection.error !== undefined && (
                <p className="inline-error chat-model-plan">{inspection.error.message}</p>
            )}
            {loading.error !== undefined && <p className="inline-error chat-model-plan">{loading.error.message}</p>}
        </div>
    );
}
