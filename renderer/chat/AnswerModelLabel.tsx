import { isDemoModel } from "./demoModelSelectors.js";
import "./AnswerModelLabel.css";

/**
 * Beside "Model" on an answer: the model that wrote it, and for the built-in demo model a label
 * saying what it is, so its noise is never read as a real model's answer, even after a real model is loaded.
 */
export function AnswerModelLabel({ model }: { readonly model: string | undefined }) {
    if (model === undefined) {
        return null;
    }
    if (isDemoModel({ modelName: model })) {
        return (
            <span className="answer-demo-label" title={`${model}: random weights, so its answers are noise`}>
                demo model
            </span>
        );
    }
    return <span className="answer-model-name">{model}</span>;
}
