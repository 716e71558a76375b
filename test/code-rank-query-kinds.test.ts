import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { openIndex } from "../src/code/code-search.ts";
import { ALPHA_NATURAL, ALPHA_SYMBOL, fusionWeight, queryKind } from "../src/code/rank/fusion.ts";
import { setTuning } from "../src/code/rank/tuning.ts";
import { searchIndex } from "../src/code/search.ts";
import type { CodeIndex } from "../src/code/store.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";

afterEach(() => setTuning({}));

describe("queryKind", () => {
  test("a query starting with a question word is a question, whatever its length", () => {
    expect(queryKind("how are routes matched", false)).toBe("question");
    expect(
      queryKind(
        "  Where is the session cookie signed and verified before a request reaches a handler?",
        false,
      ),
    ).toBe("question");
  });

  test("keywords, phrases and messages that do not start with one are sentences", () => {
    expect(queryKind("radix tree path matching", false)).toBe("sentence");
    expect(queryKind("request logging middleware with status codes", false)).toBe("sentence");
  });

  test("a question word later in the text (a commit message's 'when') does not make it a question", () => {
    expect(queryKind("Fix a panic when the route table is empty after a reload", false)).toBe("sentence");
  });

  test("an identifier query is its own kind, even when it reads like a word", () => {
    expect(queryKind("Router", true)).toBe("identifier");
  });
});

describe("fusionWeight", () => {
  test("identifiers lean lexical; questions and other sentences weigh the dense list alike", () => {
    for (const kind of ["question", "sentence"] as const) expect(fusionWeight(kind)).toBe(ALPHA_NATURAL);
    expect(fusionWeight("identifier")).toBe(ALPHA_SYMBOL);
    setTuning({ alphaNatural: 0.5 });
    expect(fusionWeight("question")).toBe(0.5);
    expect(fusionWeight("identifier")).toBe(ALPHA_SYMBOL);
  });
});

/**
 * A subsystem spread over one large file (each chunk mentions the query's words once) and a small
 * file that mentions them in one dense chunk.
 */
const routingChunk = (i: number) =>
  `// routing step ${i}: a request path is matched against the route table\nexport function step${i}(table, path) {\n  const entry${i} = table.lookup(path, ${i});\n  return entry${i} ?? table.fallback(${i});\n}\n`;
const FILES: Record<string, string> = {
  "src/router/table.ts": Array.from({ length: 10 }, (_, i) => routingChunk(i)).join("\n"),
  "src/matcher.ts": `// request path matched against the route table: request path, route table, matched\nexport function matchPath(table, path) {\n  return table.lookup(path);\n}\n`,
  "src/other.ts": `export function unrelated(value) {\n  return value * 2;\n}\n`,
};

let index: CodeIndex;
beforeAll(async () => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
  index = await openIndex(codeRepository(FILES), { refresh: "now" });
});

/** The best score of each file's results for `query` (lexical ranking: no query vector). */
function bestByFile(query: string): Map<string, number> {
  const best = new Map<string, number>();
  for (const { chunk, score } of searchIndex(index, query, undefined, { topK: 10, content: "code" })) {
    const path = index.files[index.chunkFile[chunk]].path;
    best.set(path, Math.max(best.get(path) ?? 0, score));
  }
  return best;
}

describe("file coherence by kind of query (real index)", () => {
  test("a question lifts the file holding many of its candidates more than the same words as a phrase do", () => {
    const words = "request path matched against the route table";
    const question = bestByFile(`how is a ${words}`);
    const phrase = bestByFile(`a ${words}`);
    const lead = (scores: Map<string, number>) =>
      (scores.get("src/router/table.ts") ?? 0) / (scores.get("src/matcher.ts") ?? 1);
    expect(question.has("src/router/table.ts") && question.has("src/matcher.ts")).toBe(true);
    expect(lead(question)).toBeGreaterThan(lead(phrase));
  });

  test("with the question share tuned to the others', both kinds rank alike", () => {
    setTuning({ fileCoherenceQuestion: 0.2 });
    const words = "request path matched against the route table";
    expect([...bestByFile(`how is a ${words}`)]).toEqual([...bestByFile(`a ${words}`)]);
  });
});
