import type { SynonymSource } from "../../src/store/synonyms.ts";

/** A phrase as a fake synonym store holds it: its text, vector and LSH bucket keys. */
export interface StoredPhrase {
  name: string;
  vector: Float32Array;
  keys: number[];
}

/** A stored synonym edge between two phrases, with its cosine. */
export interface StoredEdge {
  a: string;
  b: string;
  score: number;
}

/**
 * The reads of a SynonymSource that every fake store answers the same way (a phrase's vector, a
 * phrase's stored edges seen from either end); the tests differ only in how they serve bucket heads.
 */
export function storedPhraseReads(
  stored: StoredPhrase[],
  edges: Map<string, StoredEdge>,
): Pick<SynonymSource, "phraseVectors" | "synonymNeighbours"> {
  return {
    phraseVectors: (list) =>
      new Map(stored.filter((p) => list.includes(p.name)).map((p) => [p.name, p.vector])),
    synonymNeighbours: (list) => {
      const out = new Map<string, [string, number][]>();
      for (const e of edges.values())
        for (const [x, y] of [
          [e.a, e.b],
          [e.b, e.a],
        ])
          if (list.includes(x)) out.set(x, [...(out.get(x) ?? []), [y, e.score]]);
      return out;
    },
  };
}
