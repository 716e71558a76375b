import { beforeAll, describe, expect, test } from "bun:test";
import {
  BOUNDED_TERM_SHARE,
  Bm25Additions,
  type Bm25Index,
  mergeBm25,
  scoreBm25,
  topBm25,
} from "../src/code/bm25.ts";
import { openIndex } from "../src/code/code-search.ts";
import { topScored } from "../src/code/dense.ts";
import { feedbackTerms } from "../src/code/rank/expansion.ts";
import type { CodeIndex } from "../src/code/store.ts";
import { queryTokens } from "../src/code/tokens.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";
import { seededRandom } from "./support/random.ts";

/**
 * What topBm25 must equal: every posting walked, the feedback added at its weight after the query's
 * scores (documents only it matches after the query's), the top over the documents in the order they
 * were first matched — as the search ranked before terms were bounded.
 */
function walkedEverything(
  index: Bm25Index,
  terms: string[],
  count: number,
  feedback?: { terms: string[]; weight: number },
  allowed?: Uint8Array,
  chunkFile?: Int32Array,
) {
  const { scores, matched } = scoreBm25(index, terms);
  let ids = matched;
  if (feedback) {
    const extra = scoreBm25(index, feedback.terms);
    const newly: number[] = [];
    for (const doc of extra.matched) {
      if (scores[doc] === 0) newly.push(doc);
      scores[doc] += feedback.weight * extra.scores[doc];
    }
    ids = Int32Array.from([...matched, ...newly]);
  }
  const ranked = topScored(scores, count, ids, allowed, chunkFile);
  return { ranked, scores: ranked.map((doc) => scores[doc]) };
}

const random = seededRandom(31);

/** Documents over a vocabulary of common words (in most documents) and rare ones, with exact duplicates. */
function randomIndex(documents: number): { index: Bm25Index; vocabulary: string[] } {
  const vocabulary = [
    ...["const", "count", "items", "total"],
    ...Array.from({ length: 12 }, (_, i) => `mid${i}`),
    ...Array.from({ length: 300 }, (_, i) => `rare${i}`),
  ];
  const additions = new Bm25Additions();
  let previous: number[] = [];
  for (let d = 0; d < documents; d++) {
    let terms: number[] = [];
    if (d % 9 === 4) terms = previous;
    else {
      for (let c = 0; c < 4; c++)
        if (random() < 0.9) for (let k = Math.floor(random() * 3); k >= 0; k--) terms.push(c);
      for (let m = 0; m < 3; m++) terms.push(4 + Math.floor(random() * 12));
      for (let r = Math.floor(random() * 6); r > 0; r--) terms.push(16 + Math.floor(random() * 300));
    }
    for (const t of terms) additions.addTerm(t);
    additions.endDocument();
    previous = terms;
  }
  return { index: mergeBm25(undefined, undefined, 0, additions, vocabulary), vocabulary };
}

describe("topBm25: terms in many documents bounded, not walked", () => {
  test("equals walking every posting on random indexes, feedback, filters and ties included", () => {
    let bounded = 0;
    for (const documents of [40, 600, 3000]) {
      const { index, vocabulary } = randomIndex(documents);
      const chunkFile = Int32Array.from({ length: documents }, (_, d) => Math.floor(d / 4));
      const allowed = Uint8Array.from({ length: Math.ceil(documents / 4) }, (_, f) => (f % 3 === 2 ? 0 : 1));
      const word = () => vocabulary[Math.floor(random() ** 2 * vocabulary.length)];
      for (let q = 0; q < 60; q++) {
        const terms = Array.from({ length: 1 + Math.floor(random() * 4) }, word);
        if (q % 4 === 0) terms.push("const");
        if (q % 7 === 0) terms.push("nowhere");
        const feedback =
          q % 2 === 0
            ? { terms: ["count", word(), "items", word()].slice(0, 2 + (q % 3)), weight: 0.3 }
            : undefined;
        for (const count of [1, 10, 50]) {
          for (const filter of [undefined, allowed]) {
            const expected = walkedEverything(index, terms, count, feedback, filter, chunkFile);
            // As a search asks: the query alone, then with its feedback, passing the first's walk on;
            // every third query with nothing bounded, so buffers a walk left are reused.
            const options = { allowed: filter, chunkFile, boundedFrom: q % 3 === 0 ? documents + 1 : 0 };
            const first = topBm25(index, { terms }, count, options);
            const got = feedback
              ? topBm25(index, { terms, feedback }, count, { ...options, previous: first.walked })
              : first;
            expect({ ranked: got.ranked, scores: got.scores }).toEqual(expected);
            if (got.walked === undefined) bounded++;
          }
        }
      }
    }
    // The bounds did the work in most of those queries, rather than the walk they fall back to.
    expect(bounded).toBeGreaterThan(200);
  });

  test("equal scores are ranked in the order a full walk first matches them: by the query's first term", () => {
    // Documents of one length holding either twin (equal document frequencies, so equal scores),
    // the second twin's documents first; every one holds `const`, which is bounded.
    const additions = new Bm25Additions();
    const vocabulary = ["const", "first", "second", "filler"];
    for (let d = 0; d < 80; d++) {
      for (const t of [0, d < 40 ? 2 : 1, 3]) additions.addTerm(t);
      additions.endDocument();
    }
    for (let d = 0; d < 200; d++) {
      for (const t of [0, 3, 3]) additions.addTerm(t);
      additions.endDocument();
    }
    const index = mergeBm25(undefined, undefined, 0, additions, vocabulary);
    const terms = ["first", "second", "const"];
    const got = topBm25(index, { terms }, 10, { boundedFrom: 0 });
    expect(got.walked).toBeUndefined();
    expect(got.ranked).toEqual(walkedEverything(index, terms, 10).ranked);
    // The documents of "first" (40–49), though those of "second" (0–39) score the same and come before.
    expect(got.ranked).toEqual([40, 41, 42, 43, 44, 45, 46, 47, 48, 49]);
  });

  test("a query of only common terms, or too few documents with a rare one, walks everything", () => {
    const { index } = randomIndex(400);
    const common = topBm25(index, { terms: ["const", "count"] }, 50, { boundedFrom: 0 });
    expect(common.walked).toBeDefined();
    expect(common.ranked).toEqual(walkedEverything(index, ["const", "count"], 50).ranked);
    const rare = topBm25(index, { terms: ["rare7", "const"] }, 50, { boundedFrom: 0 });
    expect(rare.walked).toBeDefined();
    expect(rare.ranked).toEqual(walkedEverything(index, ["rare7", "const"], 50).ranked);
    expect(BOUNDED_TERM_SHARE).toBeLessThan(1);
    // A term below BOUNDED_FROM_POSTINGS is walked whatever its share.
    expect(topBm25(index, { terms: ["rare3", "const"] }, 10).walked).toBeDefined();
  });
});

describe("topBm25 on a built index", () => {
  let index: CodeIndex;
  beforeAll(async () => {
    process.env.TRIFORGE_HOME = tempDir("triforge-home-");
    // Sixty files that all use `const` and `result`, a handful that retry, and some docs.
    const files: Record<string, string> = {};
    for (let f = 0; f < 60; f++) {
      const topic = ["retry", "parse", "render", "upload"][f % 4];
      files[`src/${topic}/file${f}.ts`] = [
        `export function ${topic}Step${f}(input) {`,
        "  const result = prepare(input);",
        f % 4 === 0
          ? `  for (let attempt = 0; attempt < ${f}; attempt++) backoffDelay(attempt);`
          : "  log(result);",
        `  const total${f} = result.count + ${f};`,
        "  return result;",
        "}",
      ].join("\n");
    }
    files["docs/retry.md"] =
      "# Retrying\n\nEvery request is retried with a backoff delay after each attempt.\n";
    index = await openIndex(codeRepository(files), { refresh: "now" });
  });

  test("the query's and the feedback's top 50 are those of walking every posting", () => {
    const codeOnly = Uint8Array.from(index.files, (file) => (file.kind === "code" ? 1 : 0));
    for (const query of ["when do we retry a request", "const result", "parse the input and return result"]) {
      const terms = queryTokens(query);
      for (const filter of [undefined, codeOnly]) {
        const first = topBm25(index.bm25, { terms }, 50, {
          allowed: filter,
          chunkFile: index.chunkFile,
          boundedFrom: 0,
        });
        expect(first.ranked).toEqual(
          walkedEverything(index.bm25, terms, 50, undefined, filter, index.chunkFile).ranked,
        );
        const feedback = { terms: feedbackTerms(index, terms, first.ranked), weight: 0.3 };
        expect(
          topBm25(index.bm25, { terms, feedback }, 50, {
            allowed: filter,
            chunkFile: index.chunkFile,
            boundedFrom: 0,
            previous: first.walked,
          }).ranked,
        ).toEqual(walkedEverything(index.bm25, terms, 50, feedback, filter, index.chunkFile).ranked);
      }
    }
  });
});
