/**
 * The ranking weights a cross-validation may vary. Each constant keeps its value and its reason in
 * the file that applies it; that file reads it through `tuned()`, so benchmark/code-cv.ts can score
 * another value over the same loaded indexes (it chooses each one on 18 repositories and scores the
 * 19th with it). Nothing in the product sets an override.
 */

export type TunableWeight =
  | "alphaNatural"
  | "alphaSymbol"
  | "fileCoherenceQuestion"
  | "definitionBoost"
  | "pathMatchBoost"
  | "fileCoherenceShare"
  | "fileSaturationDecay"
  | "strongPathPenalty"
  | "buildOutputPenalty"
  | "namedTestDirPenalty"
  | "feedbackWeight"
  | "feedbackChunks"
  | "feedbackTerms"
  | "feedbackSupport"
  | "lexicalMarginBoost"
  | "lexicalMarginRatio";

const overrides = new Map<TunableWeight, number>();
/** Bumped by every setTuning: what a cache of tuned values (search.ts's path penalties) was made under. */
let version = 0;

/** The tuning's version: a cache made under another one is stale. */
export function tuningVersion(): number {
  return version;
}

/** The value in force for `name`: the benchmark's override, else the file's constant `value`. */
export function tuned(name: TunableWeight, value: number): number {
  return overrides.size === 0 ? value : (overrides.get(name) ?? value);
}

/** Replaces every override by `values` (an empty object restores the constants). Benchmarks only. */
export function setTuning(values: Partial<Record<TunableWeight, number>>): void {
  version++;
  overrides.clear();
  for (const [name, value] of Object.entries(values)) overrides.set(name as TunableWeight, value);
}
