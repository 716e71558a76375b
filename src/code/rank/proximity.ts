/**
 * Proximity: the query's terms close together in a chunk (on a few consecutive lines) say more than
 * the same terms spread over it. docs/code-search.md has the cross-validated figures.
 */
import { inverseFrequency } from "../bm25.ts";
import type { CodeIndex } from "../store.ts";
import { tokenize } from "../tokens.ts";
import { tuned } from "./tuning.ts";

/** EXPERIMENT: gain × best score × IDF share of query terms within one window of lines (0: off). */
const PROXIMITY_BOOST = 0;
/** Lines in a window. */
const WINDOW_LINES = 3;
/** Only the best candidates are read: their texts are tokenised again. */
const PROXIMITY_CHUNKS = 20;

export function boostProximity(index: CodeIndex, scores: Map<number, number>, queryTerms: string[]): void {
  const weight = tuned("proximityBoost", PROXIMITY_BOOST);
  if (weight <= 0) return;
  const idf = new Map<string, number>();
  let total = 0;
  for (const term of queryTerms) {
    const id = index.bm25.termIds.get(term);
    if (id === undefined) continue;
    const value = inverseFrequency(index.bm25, id);
    idf.set(term, value);
    total += value;
  }
  if (idf.size < 2) return;
  const ranked = [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, PROXIMITY_CHUNKS);
  const unit = (weight * ranked[0][1]) / total;
  for (const [chunk, score] of ranked) {
    const lines = index.texts[chunk].split("\n").map((line) => tokenize(line).filter((t) => idf.has(t)));
    let bestWindow = 0;
    for (let start = 0; start < lines.length; start++) {
      const held = new Set<string>();
      for (let l = start; l < Math.min(lines.length, start + WINDOW_LINES); l++)
        for (const t of lines[l]) held.add(t);
      if (held.size < 2) continue;
      let sum = 0;
      for (const t of held) sum += idf.get(t) ?? 0;
      if (sum > bestWindow) bestWindow = sum;
    }
    if (bestWindow) scores.set(chunk, score + unit * bestWindow);
  }
}
