/**
 * Turning extractor output (local or OpenIE) into a chunk's graph contribution, and the synonym edges
 * between phrase nodes. Both graph sources end in the same ChunkGraph shape, so everything after this
 * point (store, PPR) is blind to where a fact came from.
 */
import type { OpenIEResult } from "../llm/openie.ts";
import type { ChunkGraph, EntityMention, FactMention, SynonymEdge } from "../store/types.ts";
import { normalizePhrase, phraseLabel } from "./phrases.ts";

/** HippoRAG 2's synonymy threshold on phrase-embedding cosine. */
export const SYNONYM_THRESHOLD = 0.8;

/** A chunk's graph from a validated OpenIE result: each triple term is a phrase node, as in HippoRAG 2. */
export function graphFromOpenIE(result: OpenIEResult): ChunkGraph {
  const entities = new Map<string, EntityMention>();
  const facts = new Map<string, FactMention>();
  const mention = (raw: string) => {
    const phrase = normalizePhrase(raw);
    if (phrase && !entities.has(phrase)) entities.set(phrase, { phrase, label: phraseLabel(raw) });
    return phrase;
  };
  for (const [s, p, o] of result.triples) {
    const subject = mention(s);
    const object = mention(o);
    const predicate = p.normalize("NFKC").replace(/\s+/gu, " ").trim().toLowerCase();
    if (!subject || !object || subject === object || !predicate) continue;
    facts.set(`${subject}\u0001${predicate}\u0001${object}`, { subject, predicate, object });
  }
  // HippoRAG 2 builds phrase nodes from triple terms only; named entities that no triple uses still
  // link their passage, which keeps a passage with no triple reachable from the graph.
  for (const e of result.entities) mention(e);
  return { entities: [...entities.values()], facts: [...facts.values()] };
}

/**
 * Dimensions scored before the bound check. Model2vec models are PCA-rotated, so the leading dimensions
 * carry most of a vector's energy: after them, partial + |tail(a)|·|tail(b)| (Cauchy–Schwarz) bounds the
 * cosine, and most pairs are ruled out exactly, without reading their tails (~3× faster on 19k phrases).
 */
export const BOUND_DIMS = 16;

/**
 * The pairs at cosine ≥ `threshold` between each fresh row and every existing row, then every fresh row
 * before it: a flat list of (fresh row, other row, cosine), where other rows count existing rows first,
 * then fresh ones (`nExisting + j`), in that order per fresh row. Rows are L2-normalised.
 * Self-contained on purpose (nothing from module scope): synonym-worker.ts runs its source text.
 */
export function synonymPairs(
  existing: Float32Array,
  nExisting: number,
  fresh: Float32Array,
  nFresh: number,
  dim: number,
  head: number,
  threshold: number,
): number[] {
  const tailNorms = (vectors: Float32Array, count: number): Float32Array => {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) {
      let s = 0;
      for (let d = head; d < dim; d++) s += vectors[i * dim + d] ** 2;
      out[i] = Math.sqrt(s);
    }
    return out;
  };
  /** The cosine of two rows when it can reach `threshold`, else -1 (ruled out by the bound). */
  const cosineAtLeast = (
    v: Float32Array,
    i: number,
    tv: number,
    w: Float32Array,
    j: number,
    tw: number,
  ): number => {
    const a = i * dim;
    const b = j * dim;
    let s = 0;
    for (let d = 0; d < head; d++) s += v[a + d] * w[b + d];
    if (s + tv * tw < threshold) return -1;
    for (let d = head; d < dim; d++) s += v[a + d] * w[b + d];
    return s;
  };
  const existingTails = tailNorms(existing, nExisting);
  const freshTails = tailNorms(fresh, nFresh);
  const pairs: number[] = [];
  for (let i = 0; i < nFresh; i++) {
    const ti = freshTails[i];
    for (let j = 0; j < nExisting; j++) {
      const score = cosineAtLeast(fresh, i, ti, existing, j, existingTails[j]);
      if (score >= threshold) pairs.push(i, j, score);
    }
    for (let j = 0; j < i; j++) {
      const score = cosineAtLeast(fresh, i, ti, fresh, j, freshTails[j]);
      if (score >= threshold) pairs.push(i, nExisting + j, score);
    }
  }
  return pairs;
}

/** Names the pairs of synonymPairs: `phrases` are the existing phrases, then the fresh ones. */
export function pairsToEdges(
  pairs: ArrayLike<number>,
  fresh: string[],
  phrases: (j: number) => string,
): SynonymEdge[] {
  const edges: SynonymEdge[] = [];
  for (let p = 0; p < pairs.length; p += 3) {
    const a = fresh[pairs[p]];
    const b = phrases(pairs[p + 1]);
    if (a !== b) edges.push({ a, b, score: pairs[p + 2] });
  }
  return edges;
}

/**
 * Synonym edges for NEW phrases only: each new phrase against every existing phrase and every new
 * phrase before it (so no pair is compared, or stored, twice). Vectors are L2-normalised rows.
 */
export function synonymEdges(
  existing: { phrases: string[]; vectors: Float32Array },
  fresh: { phrases: string[]; vectors: Float32Array },
  dim: number,
): SynonymEdge[] {
  const nExisting = existing.phrases.length;
  const pairs = synonymPairs(
    existing.vectors,
    nExisting,
    fresh.vectors,
    fresh.phrases.length,
    dim,
    Math.min(BOUND_DIMS, dim),
    SYNONYM_THRESHOLD,
  );
  return pairsToEdges(pairs, fresh.phrases, (j) =>
    j < nExisting ? existing.phrases[j] : fresh.phrases[j - nExisting],
  );
}
