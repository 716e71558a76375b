import type { HeadRows, SynonymSource } from "../../src/store/synonyms.ts";

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
 * A phrase's row id is its place in `stored`, from 1 (as headRows must be given them).
 */
export function storedPhraseReads(
  stored: StoredPhrase[],
  edges: Map<string, StoredEdge>,
): Pick<SynonymSource, "phraseVectors" | "synonymNeighbours"> {
  return {
    phraseVectors: (list) =>
      new Map(
        stored.flatMap((p, i) => (list.includes(p.name) ? [[p.name, { id: i + 1, vector: p.vector }]] : [])),
      ),
    synonymNeighbours: (list) => {
      const out = new Map<string, [string, number, number][]>();
      const idOf = (name: string) => stored.findIndex((p) => p.name === name) + 1;
      for (const e of edges.values())
        for (const [x, y] of [
          [e.a, e.b],
          [e.b, e.a],
        ])
          if (list.includes(x)) out.set(x, [...(out.get(x) ?? []), [y, e.score, idOf(y)]]);
      return out;
    },
  };
}

/** A bucket head row as the tests write and read them (`id`: the phrase's row id). */
export interface HeadRow {
  key: number;
  phrase: string;
  id?: number;
  rank?: number;
  vector?: Float32Array;
}

/** Rows as a SynonymSource's columns (a phrase's id and vector from its first row that has one). */
export function headRows(list: HeadRow[]): HeadRows {
  const phrases: string[] = [];
  const ids: number[] = [];
  const vectors: (Float32Array | undefined)[] = [];
  const keys: number[] = [];
  const heads: number[] = [];
  const places = new Map<string, number>();
  for (const r of list) {
    let at = places.get(r.phrase);
    if (at === undefined) {
      if (r.id === undefined) throw new Error(`headRows: ${r.phrase} has no row id`);
      places.set(r.phrase, (at = phrases.push(r.phrase) - 1));
      ids.push(r.id);
      vectors.push(undefined);
    }
    vectors[at] ??= r.vector;
    keys.push(r.key);
    heads.push(at);
  }
  return { phrases, ids, vectors, vectorAt: phrases.map(() => 0), keys, heads };
}

/**
 * A SynonymSource's bucket heads as rows, each with its phrase's name (asked of the source where the
 * rows left it out), and its rank and vector (copied out, `dim` wide) where given.
 */
export function headRowList(source: SynonymSource, keys: number[], limit: number, dim: number): HeadRow[] {
  const rows = source.bucketHeads(keys, limit);
  return Array.from(rows.keys, (key, i) => {
    const p = rows.heads[i];
    const vectors = rows.vectors[p];
    const at = rows.vectorAt[p];
    return {
      key,
      phrase: rows.phrases[p] ?? source.phraseName!(rows.ids[p]),
      ...(rows.ranks ? { rank: rows.ranks[p] } : {}),
      ...(vectors ? { vector: vectors.slice(at, at + dim) } : {}),
    };
  });
}
