import { expect, test } from "bun:test";
import {
  fuse,
  LEXICAL_MARGIN_BOOST,
  LEXICAL_MARGIN_RATIO,
  liftClearLexicalWinner,
  rrfScores,
} from "../src/code/rank/fusion.ts";
import { setTuning } from "../src/code/rank/tuning.ts";
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

test("a lexical first that leads the second by the margin gains the boost times the best fused score; a narrow one nothing", () => {
  const lexical = [7, 3, 9];
  const dense = [3, 9, 5];
  const fusedWith = (lexicalScores: number[]) => {
    const scores = fuse(lexical, dense, 0.4);
    liftClearLexicalWinner(scores, lexical, lexicalScores);
    return scores;
  };
  const plain = fuse(lexical, dense, 0.4);
  const best = Math.max(...plain.values());
  // Chunk 3 is first in fusion (second lexically, first by meaning); a clear lexical winner overtakes it.
  expect(best).toBe(plain.get(3)!);
  const clear = fusedWith([10 * LEXICAL_MARGIN_RATIO, 10, 4]);
  expect(clear.get(7)).toBeCloseTo(plain.get(7)! + LEXICAL_MARGIN_BOOST * best, 12);
  expect(clear.get(7)!).toBeGreaterThan(clear.get(3)!);
  for (const id of [3, 9, 5]) expect(clear.get(id)).toBe(plain.get(id));
  expect([...fusedWith([10 * LEXICAL_MARGIN_RATIO * 0.99, 10, 4]).entries()]).toEqual([...plain.entries()]);
  // One lexical hit has no second to lead; an override of 0 turns the rule off.
  const alone = fuse([7], dense, 0.4);
  liftClearLexicalWinner(alone, [7], [5]);
  expect([...alone.entries()]).toEqual([...fuse([7], dense, 0.4).entries()]);
  setTuning({ lexicalMarginBoost: 0 });
  try {
    expect([...fusedWith([100, 10, 4]).entries()]).toEqual([...plain.entries()]);
  } finally {
    setTuning({});
  }
});
