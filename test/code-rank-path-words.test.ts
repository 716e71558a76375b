import { describe, expect, test } from "bun:test";
import {
  coveredBy,
  keywordOverlap,
  pathKeywordMatcher,
  pathWords,
  pathWordTable,
  queryKeywords,
  stemWordForms,
} from "../src/code/rank/path-words.ts";
import { seededRandom } from "./support/random.ts";

/** Words from a small alphabet, so prefixes are often shared (`tra`, `tran`, `transfer`). */
function randomWord(random: () => number, length = 1 + Math.floor(random() * 7)): string {
  let word = "";
  for (let i = 0; i < length; i++) word += "tranfes"[Math.floor(random() * 7)];
  return word;
}

function randomPath(random: () => number): string {
  const folder = random() < 0.2 ? "src" : `${randomWord(random)}_${randomWord(random)}`;
  const stem = [randomWord(random), randomWord(random)].slice(0, 1 + Math.floor(random() * 2));
  const name =
    random() < 0.1
      ? "mod.rs"
      : `${stem.join(random() < 0.5 ? "_" : "-")}.${random() < 0.5 ? "c" : "test.ts"}`;
  return `${folder}/${name}`;
}

describe("pathKeywordMatcher (path words as ids, each compared with a query's keywords once)", () => {
  test("keywordOverlap and coveredBy's answers for every file, over queries sharing one table", () => {
    const random = seededRandom(20);
    const paths = Array.from({ length: 200 }, () => randomPath(random));
    const table = pathWordTable(paths);
    let matched = 0;
    let coveredCount = 0;
    for (let query = 0; query < 300; query++) {
      // Half the keywords taken from a path's words (whole or a prefix), so many files match.
      const keywords = new Set<string>();
      for (let k = 1 + Math.floor(random() * 12); k > 0; k--) {
        const words = [...pathWords(paths[Math.floor(random() * paths.length)])].filter((w) => w.length >= 3);
        const word =
          words.length && random() < 0.5 ? words[Math.floor(random() * words.length)] : randomWord(random, 5);
        // Some keywords shorter than a shared prefix can be: they match only a word equal to them.
        keywords.add(
          word.slice(0, random() < 0.15 ? 1 + Math.floor(random() * 2) : 3 + Math.floor(random() * 4)),
        );
      }
      const { overlap, covered } = pathKeywordMatcher(table, keywords);
      for (let n = 0; n < 30; n++) {
        const file = Math.floor(random() * paths.length);
        const expected = keywordOverlap(keywords, pathWords(paths[file]));
        expect(overlap(file)).toBe(expected);
        const expectedCovered = coveredBy(keywords, stemWordForms(paths[file]));
        expect(covered(file)).toBe(expectedCovered);
        if (expected) matched++;
        if (expectedCovered) coveredCount++;
      }
    }
    // The cases above are not all misses.
    expect(matched).toBeGreaterThan(500);
    expect(coveredCount).toBeGreaterThan(50);
  });

  test("more keywords than bits of a mask: still keywordOverlap's count", () => {
    const keywords = new Set(Array.from({ length: 40 }, (_, i) => `keyword${i}`));
    const table = pathWordTable(["key/keyword.ts", "other/file.ts"]);
    const { overlap, covered } = pathKeywordMatcher(table, keywords);
    expect(overlap(0)).toBe(40);
    expect(covered(0)).toBe(true);
    expect(overlap(1)).toBe(0);
    expect(covered(1)).toBe(false);
  });

  test("a question's keywords against real paths, a package root named by its folder", () => {
    const paths = [
      "lib/transfer.c",
      "src/http/sender.ts",
      "retry/mod.rs",
      "docs/README.md",
      "lib/transfer.h",
    ];
    const keywords = queryKeywords("where is the data sent during a transfer retry");
    const { overlap, covered } = pathKeywordMatcher(pathWordTable(paths), keywords);
    paths.forEach((path, file) => {
      expect(overlap(file)).toBe(keywordOverlap(keywords, pathWords(path)));
      expect(covered(file)).toBe(coveredBy(keywords, stemWordForms(path)));
    });
    expect(covered(0)).toBe(true);
    expect(covered(2)).toBe(true);
    expect(overlap(3)).toBe(0);
  });
});
