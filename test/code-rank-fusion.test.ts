import { expect, test } from "bun:test";
import { fuse, rrfScores } from "../src/code/rank/fusion.ts";
import { seededRandom } from "./support/random.ts";

/** The fused scores as defined: every id of either list, lexical ones first, in first-seen order. */
function reference(lexical: number[], dense: number[], alpha: number): [number, number][] {
  const lexicalFused = rrfScores(lexical);
  const denseFused = rrfScores(dense);
  return [...new Set([...lexical, ...dense])].map((id) => [
    id,
    alpha * (denseFused.get(id) ?? 0) + (1 - alpha) * (lexicalFused.get(id) ?? 0),
  ]);
}

test("fuse: each candidate of either list once, lexical ones first, with alpha x dense RRF + (1 - alpha) x lexical RRF", () => {
  const random = seededRandom(31);
  for (let trial = 0; trial < 200; trial++) {
    // Overlapping lists of distinct ids, one of them sometimes empty.
    const pick = (n: number) => [...new Set(Array.from({ length: n }, () => Math.floor(random() * 120)))];
    const lexical = pick(Math.floor(random() * 60));
    const dense = pick(trial % 7 === 0 ? 0 : Math.floor(random() * 60));
    const alpha = trial % 2 ? 0.4 : 0.3;
    expect([...fuse(lexical, dense, alpha).entries()]).toEqual(reference(lexical, dense, alpha));
  }
});
