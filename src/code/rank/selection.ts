/**
 * Selection: the top results after path penalties, with each further hit from one file decayed, so
 * that ten results show several files.
 */
import { pathPenalty } from "./penalties.ts";
import { tuned } from "./tuning.ts";

/** Hits from one file before later ones are decayed: the next results should show other files. */
const FILE_SATURATION_THRESHOLD = 1;
/**
 * Each further hit from the same file keeps this share of its score per extra hit. A quarter, not
 * half: a second chunk of one file rarely adds an answer another file would not, and at half it
 * still pushed whole files out of the top ten (code-localise recall@10; every value from 0 to 0.25
 * measured the same, and code-cv's folds all choose that range over 0.5).
 */
const FILE_SATURATION_DECAY = 0.25;

/**
 * The top `k` ids by score after path penalties (`penaltyOf`, pathPenalty by default; a caller may
 * give one that remembers them across queries), decaying the score of each further hit from a
 * file already picked. Candidates are visited best first; once `k` are held, a candidate whose
 * undecayed score is below the k-th best held score cannot enter the top `k` and ends the scan.
 */
export function selectTop<File = string>(
  scores: Map<number, number>,
  /** A candidate's file: its path, or any key one file has alone (search.ts gives its number with `penaltyOf`). */
  fileOf: (id: number) => File,
  k: number,
  hasFile?: (path: string) => boolean,
  penaltyOf: (file: File) => number = (path) => pathPenalty(path as string, hasFile),
): { id: number; score: number }[] {
  const penalty = new Map<File, number>();
  const penalised: { id: number; score: number; file: File }[] = [];
  for (const [id, score] of scores) {
    const file = fileOf(id);
    let factor = penalty.get(file);
    if (factor === undefined) penalty.set(file, (factor = penaltyOf(file)));
    penalised.push({ id, score: score * factor, file });
  }
  penalised.sort((a, b) => b.score - a.score || a.id - b.id);
  const decay = tuned("fileSaturationDecay", FILE_SATURATION_DECAY);
  const perFile = new Map<File, number>();
  const held: { id: number; score: number }[] = [];
  // The k best held scores, descending: a decayed hit must not lower the bar the scan stops at.
  const best: number[] = [];
  for (const candidate of penalised) {
    if (best.length >= k && candidate.score < best[k - 1]) break;
    const already = perFile.get(candidate.file) ?? 0;
    const excess = already - FILE_SATURATION_THRESHOLD + 1;
    const score = excess > 0 ? candidate.score * decay ** excess : candidate.score;
    held.push({ id: candidate.id, score });
    perFile.set(candidate.file, already + 1);
    if (best.length < k || score > best[k - 1]) {
      let at = Math.min(best.length, k - 1);
      best[at] = score;
      while (at > 0 && best[at - 1] < score) {
        best[at] = best[at - 1];
        best[--at] = score;
      }
    }
  }
  held.sort((a, b) => b.score - a.score || a.id - b.id);
  return held.slice(0, k);
}
