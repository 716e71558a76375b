import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { searchCode } from "../src/code/code-search.ts";
import { selectTop } from "../src/code/rank/selection.ts";
import { setTuning } from "../src/code/rank/tuning.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";
import { seededRandom } from "./support/random.ts";

beforeAll(() => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
});
afterEach(() => setTuning({}));

describe("one file's further hits (selection)", () => {
  test("a second chunk of a file keeps a quarter of its score: a weaker first chunk of another file ranks above it", () => {
    const scores = new Map([
      [1, 1.0],
      [2, 0.9],
      [3, 0.3],
      [4, 0.2],
    ]);
    const fileOf = (id: number) => (id <= 2 ? "a.ts" : id === 3 ? "b.ts" : "c.ts");
    const ranked = selectTop(scores, fileOf, 4);
    expect(ranked.map((r) => r.id)).toEqual([1, 3, 2, 4]);
    expect(ranked.find((r) => r.id === 2)?.score).toBeCloseTo(0.225);
  });

  test("stopping the scan early returns what scoring every candidate would (2,000 seeded cases, ties included)", () => {
    const random = seededRandom(20);
    for (let trial = 0; trial < 2000; trial++) {
      const scores = new Map<number, number>();
      const files = 1 + Math.floor(random() * 8);
      const count = 1 + Math.floor(random() * 60);
      // Scores on a coarse grid, so equal scores (and equal decayed scores) happen.
      for (let id = 0; id < count; id++) scores.set(id, Math.ceil(random() * 4) / 4);
      const fileOf = (id: number) => `f${(id * 7919) % files}.ts`;
      const k = 1 + Math.floor(random() * 12);
      // Every candidate, best first, each further hit of a file decayed, then the top k.
      const perFile = new Map<string, number>();
      const all = [...scores]
        .sort((a, b) => b[1] - a[1] || a[0] - b[0])
        .map(([id, score]) => {
          const already = perFile.get(fileOf(id)) ?? 0;
          perFile.set(fileOf(id), already + 1);
          return { id, score: score * 0.25 ** already };
        })
        .sort((a, b) => b.score - a.score || a.id - b.id)
        .slice(0, k);
      expect(selectTop(scores, fileOf, k)).toEqual(all);
    }
  });

  test("a file named by the query shows once, and the next file is the other one that answers it", async () => {
    // Every chunk of retry.ts gains the path match (its name is a query word), so its second chunk
    // scores about twice scheduler.ts's: only the decay of a file's second hit lets the other through.
    const retryChunk = (i: number) =>
      `export function retryAttempt${i}(attempt: number): number {\n  // retry with exponential backoff, attempt ${i}\n  const delay = Math.min(1000 * 2 ** attempt, 30000);\n  return delay + jitter${i}(attempt);\n}\n`;
    const root = codeRepository({
      "src/retry.ts": Array.from({ length: 12 }, (_, i) => retryChunk(i)).join("\n"),
      "src/scheduler.ts":
        "export function scheduleNext(task: Task): void {\n  // a failed task waits out its backoff\n  timers.push({ at: now() + task.backoff, task });\n}\n",
      "src/format.ts": "export function formatBytes(n: number): string {\n  return String(n);\n}\n",
    });
    const query = "retry backoff";
    const { hits } = await searchCode(root, query, { topK: 2 });
    expect(hits.map((h) => h.file_path)).toEqual(["src/retry.ts", "src/scheduler.ts"]);
    // The same repository under the earlier half-score decay: the second chunk of retry.ts wins.
    setTuning({ fileSaturationDecay: 0.5 });
    const { hits: before } = await searchCode(root, query, { topK: 2 });
    expect(before.map((h) => h.file_path)).toEqual(["src/retry.ts", "src/retry.ts"]);
  });
});
