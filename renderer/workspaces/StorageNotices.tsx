import { useStorageNoticeStore } from "../stores/storageNoticeStore.js";
import { formatCount } from "../util/formatCount.js";
import { describeStoreProblem } from "./storageNoticeText.js";

/** Problems listed one by one up to this many; the rest are counted (the host's log lists them all). */
const MAX_LISTED_PROBLEMS = 20;

/**
 * What the user must know about their saved chats: records the host set aside as damaged when it
 * started (kept in a copy, named here), and changes that could not be saved. Each stays until dismissed.
 */
export function StorageNotices() {
    const problems = useStorageNoticeStore((state) => state.problems);
    const saveFailure = useStorageNoticeStore((state) => state.saveFailure);
    return (
        <>
            {problems.length > 0 && (
                <section className="storage-notice" role="alert" aria-label="Damaged chat records" data-num-problems={problems.length}>
                    <p className="storage-notice-title">Some saved chat records could not be read. Everything else was loaded.</p>
                    <ul>
                        {problems.slice(0, MAX_LISTED_PROBLEMS).map((problem, index) => (
                            <li key={index} data-kind={problem.kind} data-line={problem.line ?? ""} data-copy={problem.copy}>
                                {describeStoreProblem(problem)}
                            </li>
                        ))}
                    </ul>
                    {problems.length > MAX_LISTED_PROBLEMS && (
                        <p>And {formatCount(problems.length - MAX_LISTED_PROBLEMS)} more, listed in Kvault's log.</p>
                    )}
                    {[...new Set(problems.map((problem) => problem.copy))].map((copy) => (
                        <p key={copy} className="storage-notice-copy">
                            The file as it was is kept at <code>{copy}</code>.
                        </p>
                    ))}
                    <button
                        type="button"
                        className="link-button"
                        onClick={() => useStorageNoticeStore.getState().dismissProblems()}
                        aria-label="Dismiss the damaged records notice"
                    >
                        Dismiss
                    </button>
                </section>
            )}
            {saveFailure !== undefined && (
                <section className="storage-notice" role="alert" aria-label="Not saved">
                    <p className="storage-notice-title">
                        Could not save: {saveFailure.message}
                        {saveFailure.numFailed > 1 && ` (${formatCount(saveFailure.numFailed)} changes not saved)`}
                    </p>
                    <button
                        type="button"
                        className="link-button"
                        onClick={() => useStorageNoticeStore.getState().dismissSaveFailure()}
                        aria-label="Dismiss the not saved notice"
                    >
                        Dismiss
                    </button>
                </section>
            )}
        </>
    );
}
