import { describe, expect, test } from "bun:test";
import { extractGraph } from "../src/memory/extract.ts";
import { graphFromOpenIE } from "../src/memory/graph.ts";
import { normalizePhrase } from "../src/memory/phrases.ts";
import { buildCsr, localPageRank } from "../src/memory/recall/ppr.ts";
import { lexicalTokens } from "../src/memory/tokens.ts";
import {
  bandKeys,
  nearest,
  SYNONYM_NEIGHBOURS,
  SynonymGraph,
  type SynonymSource,
} from "../src/store/synonyms.ts";
import { seededRandom } from "./support/random.ts";
import { headRows, type StoredEdge, type StoredPhrase, storedPhraseReads } from "./support/synonym-store.ts";

describe("phrase normalisation", () => {
  test("keeps identifiers, C++ and Cyrillic intact", () => {
    expect(normalizePhrase("foo_bar")).toBe("foo_bar");
    expect(normalizePhrase("C++")).toBe("C++");
    expect(normalizePhrase("user.id")).toBe("user.id");
    expect(normalizePhrase("`getUserName`")).toBe("getUserName");
    expect(normalizePhrase("Привет Мир")).toBe("привет мир");
    expect(normalizePhrase("src/auth/session.ts.")).toBe("src/auth/session.ts");
  });

  test("folds case and articles of plain names, drops empty phrases", () => {
    expect(normalizePhrase("The  Journal of Physics")).toBe("journal of physics");
    expect(normalizePhrase('"Caroline"')).toBe("caroline");
    expect(normalizePhrase("...")).toBe("");
  });
});

describe("local knowledge-graph extractor", () => {
  const text =
    "We fixed getUserName in src/memory/indexer.ts and renamed `foo_bar` to user.id. Upgraded to Python 3.12 with postgres. Maria Lopez from Acme Corp asked for the retry budget.";
  const graph = extractGraph(text);
  const phrases = graph.entities.map((e) => e.phrase);

  test("finds file paths, identifiers, quoted terms, versions, tools and capitalised names", () => {
    for (const expected of [
      "getUserName",
      "src/memory/indexer.ts",
      "foo_bar",
      "user.id",
      "Python 3.12",
      "postgres",
      "maria lopez",
      "acme corp",
    ]) {
      expect(phrases).toContain(expected);
    }
  });

  test("relates things that share a sentence, with the words between them as the relation", () => {
    const facts = graph.facts.map((f) => `${f.subject} | ${f.predicate} | ${f.object}`);
    expect(facts).toContain("getUserName | in | src/memory/indexer.ts");
    // Nothing relates across sentences.
    expect(graph.facts.some((f) => f.subject === "getUserName" && f.object === "maria lopez")).toBe(false);
  });

  test("every fact's terms are phrase nodes of the same chunk (forget relies on it)", () => {
    for (const f of graph.facts) {
      expect(phrases).toContain(f.subject);
      expect(phrases).toContain(f.object);
    }
  });

  test("sentence-initial filler is not a name", () => {
    const g = extractGraph("Thanks! That's great. Yesterday Caroline went to the support group.");
    const p = g.entities.map((e) => e.phrase);
    expect(p).toContain("caroline");
    expect(p).not.toContain("thanks");
    expect(p).not.toContain("that's");
  });
});

describe("OpenIE output becomes the same graph shape", () => {
  test("triple terms are phrase nodes, predicates are lower-cased, self-loops dropped", () => {
    const graph = graphFromOpenIE({
      entities: ["Carl Rogers", "psychotherapy"],
      triples: [
        ["Carl Rogers", "Developed", "Person-centered therapy"],
        ["X", "is", "X"],
      ],
    });
    expect(graph.entities.map((e) => e.phrase).sort()).toEqual(
      ["carl rogers", "person-centered therapy", "psychotherapy", "x"].sort(),
    );
    expect(graph.facts).toEqual([
      { subject: "carl rogers", predicate: "developed", object: "person-centered therapy" },
    ]);
  });
});

describe("synonym edges", () => {
  const unit = (v: number[]) => {
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
  const nothingStored = {
    bucketHeads: () => headRows([]),
    phraseVectors: () => new Map(),
    synonymNeighbours: () => new Map(),
  };
  const names = (edges: { a: string; b: string }[]) => edges.map((e) => [e.a, e.b].sort().join("-")).sort();

  test("new phrases meet their neighbours at cosine ≥ 0.8, each pair once", () => {
    const graph = new SynonymGraph(nothingStored);
    const first = graph.add(["a", "b"], new Float32Array([...unit([1, 0, 0]), ...unit([0, 1, 0])]));
    expect(first.add).toEqual([]);
    const fresh = graph.add(
      ["a2", "c", "c2"],
      new Float32Array([...unit([1, 0.1, 0]), ...unit([0, 0, 1]), ...unit([0, 0.2, 1])]),
    );
    expect(names(fresh.add)).toEqual(["a-a2", "c-c2"]);
  });

  test("each phrase keeps its k nearest; a closer newcomer pushes the farthest out", () => {
    const graph = new SynonymGraph(nothingStored, 2);
    // Around the x axis: p0 at angle 0, the others at growing angles (cosine to p0 falling).
    const at = (degrees: number) =>
      unit([Math.cos((degrees * Math.PI) / 180), Math.sin((degrees * Math.PI) / 180), 0]);
    graph.add(["p0", "p20", "p30"], new Float32Array([...at(0), ...at(20), ...at(30)]));
    // p10 is nearer p0 than p30 is, and nearer p20 too: p0–p30 is in neither end's two nearest any more.
    const changes = graph.add(["p10"], new Float32Array(at(10)));
    expect(names(changes.add)).toEqual(["p0-p10", "p10-p20", "p10-p30"]);
    expect(names(changes.drop)).toEqual(["p0-p30"]);
  });

  test("the same edges whatever order and batches phrases come in, crowded buckets included", () => {
    const random = seededRandom(7);
    // Four tight clusters of 30 phrases (cosine > 0.9 inside a cluster) in 16 dimensions.
    const centres = Array.from({ length: 4 }, () => Array.from({ length: 16 }, () => random() - 0.5));
    const phrases = Array.from({ length: 120 }, (_, i) => ({
      name: `p${i}`,
      vector: unit(centres[i % 4].map((x) => x + (random() - 0.5) * 0.08)),
    }));
    /** The edges after adding the phrases in this order, `size` at a time, with buckets of at most 6. */
    const edgesAfter = (order: typeof phrases, size: number) => {
      const graph = new SynonymGraph(nothingStored, 3, 6);
      const edges = new Set<string>();
      for (let at = 0; at < order.length; at += size) {
        const batch = order.slice(at, at + size);
        const changes = graph.add(
          batch.map((p) => p.name),
          new Float32Array(batch.flatMap((p) => p.vector)),
        );
        for (const e of changes.add) edges.add([e.a, e.b].sort().join("-"));
        for (const e of changes.drop) edges.delete([e.a, e.b].sort().join("-"));
      }
      return [...edges].sort();
    };
    const once = edgesAfter(phrases, phrases.length);
    expect(once.length).toBeGreaterThan(60);
    expect(edgesAfter([...phrases].reverse(), 7)).toEqual(once);
    expect(
      edgesAfter(
        [...phrases].sort(() => random() - 0.5),
        1,
      ),
    ).toEqual(once);
    expect(
      edgesAfter(
        [...phrases].sort(() => random() - 0.5),
        25,
      ),
    ).toEqual(once);
    // Crowded buckets were skipped: with no limit the same phrases meet more candidates.
    const unlimited = new SynonymGraph(nothingStored, 3, Number.POSITIVE_INFINITY).add(
      phrases.map((p) => p.name),
      new Float32Array(phrases.flatMap((p) => p.vector)),
    );
    expect(unlimited.add.length).not.toBe(once.length);
  });

  test("read back from a store run by run, crowded buckets included, the edges are those of one run", () => {
    const random = seededRandom(9);
    const centres = Array.from({ length: 4 }, () => Array.from({ length: 16 }, () => random() - 0.5));
    const phrases = Array.from({ length: 120 }, (_, i) => ({
      name: `q${i}`,
      vector: new Float32Array(unit(centres[i % 4].map((x) => x + (random() - 0.5) * 0.08))),
    }));
    const pair = (e: { a: string; b: string }) => [e.a, e.b].sort().join("-");
    const once = new SynonymGraph(nothingStored, 3, 6).add(
      phrases.map((p) => p.name),
      new Float32Array(phrases.flatMap((p) => [...p.vector])),
    );
    // The store: earlier runs' phrases by row id, and their edges with cosines.
    const stored: StoredPhrase[] = [];
    const edges = new Map<string, StoredEdge>();
    const store: SynonymSource = {
      // Every stored phrase of the bucket (more than its heads: the graph keeps the lowest itself).
      bucketHeads: (keys) =>
        headRows(
          keys.flatMap((key) =>
            stored
              .filter((p) => p.keys.includes(key))
              .map((p) => ({ key, phrase: p.name, id: stored.indexOf(p) + 1, vector: p.vector })),
          ),
        ),
      ...storedPhraseReads(stored, edges),
    };
    const order = [...phrases].sort(() => random() - 0.5);
    for (let at = 0; at < order.length; at += 9) {
      const batch = order.slice(at, at + 9);
      const changes = new SynonymGraph(store, 3, 6).add(
        batch.map((p) => p.name),
        new Float32Array(batch.flatMap((p) => [...p.vector])),
      );
      for (const e of changes.add) edges.set(pair(e), e);
      for (const e of changes.drop) edges.delete(pair(e));
      for (const p of batch) stored.push({ ...p, keys: bandKeys(p.vector) });
    }
    expect(once.add.length).toBeGreaterThan(60);
    expect([...edges.keys()].sort()).toEqual(names(once.add));
  }, 20_000);

  test("the k nearest: by cosine, then phrase text", () => {
    expect(
      nearest(
        [
          ["b", 0.9],
          ["a", 0.9],
          ["c", 0.95],
          ["d", 0.85],
        ],
        3,
      ),
    ).toEqual([
      ["c", 0.95],
      ["a", 0.9],
      ["b", 0.9],
    ]);
    expect(SYNONYM_NEIGHBOURS).toBeGreaterThan(0);
  });
});

describe("identifier-aware tokens", () => {
  test("an identifier is indexed whole and by its parts", () => {
    const tokens = lexicalTokens("getUserName reads user.id from src/app.ts");
    expect(tokens).toEqual(
      expect.arrayContaining(["getusername", "get", "user", "name", "user.id", "id", "src/app.ts", "app"]),
    );
  });
  test("plurals and -ing forms meet their stem; stopwords go", () => {
    expect(lexicalTokens("the paintings")).toEqual(lexicalTokens("painting"));
  });
});

describe("personalised PageRank", () => {
  /** Scores of every node by the local push, to a tolerance far below the assertions' precision. */
  const pageRank = (graph: ReturnType<typeof buildCsr>, reset: number[]) => {
    const scores = new Float64Array(graph.nodes);
    const nodes = [...reset.keys()].filter((i) => reset[i] > 0);
    localPageRank(graph, { nodes, weights: nodes.map((i) => reset[i]) }, 0.5, 1e-14, scores);
    return scores;
  };

  test("matches the hand-solved scores of a path graph", () => {
    // 0 — 1 — 2, unit weights, all reset mass on node 0, damping 0.5:
    // p0 = ½ + ½·p1/2, p1 = ½·(p0 + p2), p2 = ½·p1/2  ⇒  p = (7/12, 4/12, 1/12).
    const graph = buildCsr(3, Int32Array.from([0, 1]), Int32Array.from([1, 2]), Float64Array.from([1, 1]));
    const scores = pageRank(graph, [1, 0, 0]);
    expect(scores[0]).toBeCloseTo(7 / 12, 9);
    expect(scores[1]).toBeCloseTo(4 / 12, 9);
    expect(scores[2]).toBeCloseTo(1 / 12, 9);
  });

  test("follows edge weights, returns an isolated node's mass through the reset vector, normalises it", () => {
    // A star: 0 linked to 1 (weight 3) and 2 (weight 1); node 3 isolated.
    const graph = buildCsr(4, Int32Array.from([0, 0]), Int32Array.from([1, 2]), Float64Array.from([3, 1]));
    const scores = pageRank(graph, [2, 0, 0, 2]);
    expect(scores.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    expect(scores[1] / scores[2]).toBeCloseTo(3, 6);
    // Node 3 has no edges: its walk mass goes back through the reset vector (½ to node 0, ½ to itself),
    // so p3 = ½·½ + ½·(½·p3)  ⇒  p3 = 1/3.
    expect(scores[3]).toBeCloseTo(1 / 3, 6);
  });

  test("an all-zero reset vector gives all-zero scores, not NaN", () => {
    const graph = buildCsr(2, Int32Array.from([0]), Int32Array.from([1]), Float64Array.from([1]));
    expect([...pageRank(graph, [0, 0])]).toEqual([0, 0]);
  });
});
