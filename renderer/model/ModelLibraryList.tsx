import { useEffect } from "react";
import type { LibraryModel } from "../../contract/models.js";
import { useEngineStore } from "../stores/engineStore.js";
import { useModelStore } from "../stores/modelStore.js";
import type { ModelController } from "./ModelController.js";
import { libraryName, libraryRows } from "./modelText.js";

/**
 * The models the host remembers (opened by path or downloaded) with their facts, most recently
 * used first; Load and Forget. Listed again whenever the engine's model changes.
 */
export function ModelLibraryList({
    controller,
    disabled,
    onLoad
}: {
    readonly controller: ModelController;
    readonly disabled: boolean;
    readonly onLoad: (model: string) => void;
}) {
    const library = useModelStore((state) => state.library);
    const loadedPath = useEngineStore((state) => state.info?.modelPath);
    useEffect(() => {
        void controller.refreshLibrary();
    }, [controller, loadedPath]);
    return (
        <div className="model-library">
            <h3 id="model-library-heading">Model library</h3>
            {library.problems.map((problem) => (
                <p key={`${problem.code}:${problem.copy ?? ""}`} className="model-error" role="alert" data-error-code={problem.code}>
                    <strong>The library file had a problem ({problem.code}).</strong> {problem.message}
                </p>
            ))}
            {library.error !== undefined && (
                <p className="model-error" role="alert" data-error-code={library.error.code}>
                    <strong>Could not change the library ({library.error.code}).</strong> {library.error.message}
                </p>
            )}
            {library.models.length === 0 ? (
                <p className="placeholder">Models you load by path or download are listed here, with their facts.</p>
            ) : (
                <ul className="model-library-list" aria-labelledby="model-library-heading">
                    {library.models.map((model) => (
                        <LibraryEntry
                            key={model.id}
                            model={model}
                            loaded={model.path === loadedPath}
                            disabled={disabled}
                            onLoad={onLoad}
                            onForget={() => void controller.forgetModel(model.id)}
                        />
                    ))}
                </ul>
            )}
        </div>
    );
}

function LibraryEntry({
    model,
    loaded,
    disabled,
    onLoad,
    onForget
}: {
    readonly model: LibraryModel;
    readonly loaded: boolean;
    readonly disabled: boolean;
    readonly onLoad: (model: string) => void;
    readonly onForget: () => void;
}) {
    return (
        <li
            className="model-library-entry"
            data-library-id={model.id}
            data-origin={model.origin}
            data-missing={model.missing ? "true" : "false"}
            data-loaded={loaded ? "true" : "false"}
        >
            <div className="model-library-head">
                <span className="model-library-name" title={model.path}>
                    {libraryName(model)}
                </span>
                <span className="model-library-file">
                    {model.fileName} · {model.origin}
                </span>
                {model.missing && (
                    <span className="model-library-missing" title={`${model.path} is not on disk any more`}>
                        file missing
                    </span>
                )}
            </div>
            <dl className="model-library-facts" aria-label={`Library facts of ${model.fileName}`}>
                {libraryRows(model).map((row) => (
                    <div key={row.key} className="model-library-fact">
                        <dt>{row.label}</dt>
                        <dd data-fact={row.key} title={row.key === "fingerprint" ? model.fingerprint : undefined}>
                            {row.value}
                        </dd>
                    </div>
                ))}
            </dl>
            <div className="model-actions">
                <button
                    type="button"
                    disabled={disabled || model.missing || loaded}
                    onClick={() => onLoad(model.path)}
                    aria-label={`Load ${model.fileName} from the library`}
                >
                    {loaded ? "Loaded" : "Load"}
                </button>
                <button type="button" onClick={onForget} aria-label={`Forget ${model.fileName} (the file stays)`}>
                    Forget
                </button>
            </div>
        </li>
    );
}
