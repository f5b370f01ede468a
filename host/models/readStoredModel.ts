import path from "node:path";
import type { LibraryModel } from "../../contract/models.js";
import { isRecord } from "../store/readStoredValues.js";

/** A library entry as models.json holds it: whether the file is there is checked when listed, not stored. */
export type StoredModel = Omit<LibraryModel, "missing">;

/** Longest text field read back from models.json (characters): a path or a URL, with room. */
const MAX_TEXT_CHARS = 8192;

/** One entry of models.json, checked field by field; undefined for anything else. */
export function readStoredModel(value: unknown): StoredModel | undefined {
    if (!isRecord(value)) {
        return undefined;
    }
    const entry = value;
    const text = (field: unknown): field is string => typeof field === "string" && field.length > 0 && field.length <= MAX_TEXT_CHARS;
    const optionalText = (field: unknown): field is string | undefined => field === undefined || text(field);
    const count = (field: unknown): field is number => typeof field === "number" && Number.isSafeInteger(field) && field >= 0;
    const optionalCount = (field: unknown): field is number | undefined => field === undefined || count(field);
    const time = (field: unknown): field is string => text(field) && !Number.isNaN(Date.parse(field));
    if (
        !text(entry.id) ||
        !text(entry.path) ||
        !path.isAbsolute(entry.path) ||
        !text(entry.fileName) ||
        (entry.origin !== "opened" && entry.origin !== "downloaded") ||
        !optionalText(entry.source) ||
        !optionalText(entry.name) ||
        !text(entry.architecture) ||
        !optionalCount(entry.parameterCount) ||
        !optionalText(entry.fileType) ||
        !optionalCount(entry.trainContextSize) ||
        !count(entry.numLayers) ||
        !count(entry.kvBytesPerToken) ||
        !count(entry.fileBytes) ||
        typeof entry.fingerprint !== "string" ||
        !/^[0-9a-f]{16}$/.test(entry.fingerprint) ||
        !time(entry.addedAt) ||
        !time(entry.lastUsedAt)
    ) {
        return undefined;
    }
    return {
        id: entry.id,
        path: entry.path,
        fileName: entry.fileName,
        origin: entry.origin,
        source: entry.source,
        name: entry.name,
        architecture: entry.architecture,
        parameterCount: entry.parameterCount,
        fileType: entry.fileType,
        trainContextSize: entry.trainContextSize,
        numLayers: entry.numLayers,
        kvBytesPerToken: entry.kvBytesPerToken,
        fileBytes: entry.fileBytes,
        fingerprint: entry.fingerprint,
        addedAt: entry.addedAt,
        lastUsedAt: entry.lastUsedAt
    };
}
