/**
 * The longest one token of an answer held to a grammar may take, after its first: llama.cpp's
 * grammar sampler runs natively inside the decode step every sequence of a context shares, so a
 * grammar that slips past the schema's static bound (grammarAmbiguity) holds them all for each of
 * its tokens. The engine ends such a turn at its next token (GrammarBudgetError); the host's
 * `/health` names a turn that has waited past it. Far above what a grammar within the schema bound
 * costs a token (`npm run bench -- grammar`, docs/measurements.md), so that only a slow model's own
 * decode comes near it.
 */
export const MAX_GRAMMAR_TOKEN_MS = 5_000;
