/**
 * Building the arrays recall runs on from store rows, whole (a snapshot read through the MemoryStore
 * interface) or as an extension of earlier arrays by the rows added since (the local backend's persisted
 * snapshot, refreshed after each index run at a cost that follows the new rows, not the store).
 * Both paths go through `extendArrays`, so they produce the same arrays for the same rows.
 */
import {
  EDGE_KIND,
  NO_MARKS,
  type SnapshotDelta,
  type SnapshotMarks,
  type StoreSnapshot,
} from "../../store/types.ts";
import { lexicalTokens } from "../tokens.ts";
import { appendDocuments, arrayTerms, NO_POSTINGS, type Postings } from "./bm25.ts";
import { buildCsr, type CsrGraph } from "./ppr.ts";
import { countVocatives, emptyVocativeCounts, type VocativeCounts } from "./speakers.ts";

/** Passage→next passage of the same session; 3 beat 0.3 and 1 on LoCoMo (docs/memory.md). */
export const SEQUENCE_EDGE_WEIGHT = 3;

/** Everything recall reads: stored parts (extended by deltas) and parts derived from them. */
export interface SnapshotArrays {
  generation: number;
  marks: SnapshotMarks;
  dim: number;
  /** Passage i's chunk row id (ascending). */
  chunkIds: Int32Array;
  llmChunks: number;
  /** Previous and next passage of the same session (-1 at the ends). */
  previous: Int32Array;
  next: Int32Array;
  vectors: Float32Array;
  chunkPostings: Postings;
  entityIds: Int32Array;
  factIds: Int32Array;
  /** Position in `entityIds` of each fact's subject and object (-1: none). */
  factSubjects: Int32Array;
  factObjects: Int32Array;
  factVectors: Float32Array;
  factPostings: Postings;
  /**
   * Stored edges by row id: `a` is a passage index for a context edge, else a position in `entityIds`;
   * `b` a position in `entityIds` (-1: none). Positions, not row ids, so deriving the graph needs no lookup.
   */
  edges: { ids: Int32Array; kind: Uint8Array; a: Int32Array; b: Int32Array; weight: Float64Array };
  vocatives: VocativeCounts;
  /**
   * Graph node of the first phrase: passages are nodes 0..P-1, phrase position j is node passageCapacity + j.
   * P itself, or more for a persisted base, so that passages added after it keep every node number.
   */
  passageCapacity: number;
  /** Derived: stored edges with weight > 0 plus sequence edges, over passages and phrases. */
  graph: CsrGraph;
  edgeCount: number;
  /** Derived: passages holding each phrase (its context-edge degree). */
  phraseChunks: Int32Array;
  /** Derived: graph node of each fact's subject and object (-1 when the phrase is gone). */
  factSubject: Int32Array;
  factObject: Int32Array;
}

/**
 * Links `delta`'s chunks (passages `first`… in order) to the chunk before them in their session: the
 * session's tail before the delta (`passageOf` its row id) or the delta's previous chunk of it.
 */
export function linkSessions(
  previous: Int32Array,
  next: Int32Array,
  delta: Pick<SnapshotDelta, "chunks" | "sessionTails">,
  first: number,
  passageOf: (id: number) => number,
): void {
  const lastOfSession = new Map<string, number>();
  for (const [session, id] of delta.sessionTails) {
    const at = passageOf(id);
    if (at >= 0) lastOfSession.set(session, at);
  }
  delta.chunks.forEach((c, i) => {
    const at = first + i;
    const before = lastOfSession.get(c.sessionId);
    lastOfSession.set(c.sessionId, at);
    if (before === undefined) return;
    previous[at] = before;
    next[before] = at;
  });
}

/** The position of `id` in an ascending array, or -1. */
export function positionOf(ids: Int32Array, id: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid] === id) return mid;
    if (ids[mid] < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

function concat<T extends Int32Array | Float32Array | Float64Array | Uint8Array>(
  make: new (n: number) => T,
  a: T,
  b: ArrayLike<number>,
): T {
  const out = new make(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * `previous` (undefined: nothing) extended by `delta`'s rows; phrase nodes from `passageCapacity`
 * passages on (the passages themselves when not given).
 */
export function extendArrays(
  previous: SnapshotArrays | undefined,
  delta: SnapshotDelta,
  passageCapacity?: number,
): SnapshotArrays {
  const old = previous;
  const dim = old?.dim || delta.dim;
  const first = old?.chunkIds.length ?? 0;
  const P = first + delta.chunks.length;
  const chunkIds = concat(
    Int32Array,
    old?.chunkIds ?? new Int32Array(0),
    delta.chunks.map((c) => c.id),
  );
  const previousOf = new Int32Array(P).fill(-1);
  const nextOf = new Int32Array(P).fill(-1);
  if (old) {
    previousOf.set(old.previous);
    nextOf.set(old.next);
  }
  linkSessions(previousOf, nextOf, delta, first, (id) => positionOf(chunkIds, id));
  const vocatives = structuredClone(old?.vocatives ?? emptyVocativeCounts());
  countVocatives(
    vocatives,
    delta.chunks.flatMap((c) => c.turns.map((t) => ({ role: t.role, text: c.text.slice(t.start, t.end) }))),
  );
  const entityIds = concat(Int32Array, old?.entityIds ?? new Int32Array(0), delta.entityIds);
  const entityAt = (id: number) => positionOf(entityIds, id);
  const edgeIds = concat(Int32Array, old?.edges.ids ?? new Int32Array(0), delta.edges.ids);
  const weight = concat(Float64Array, old?.edges.weight ?? new Float64Array(0), delta.edges.weight);
  for (const w of delta.weights) {
    const at = positionOf(edgeIds, w.id);
    if (at >= 0) weight[at] = w.weight;
  }
  const stored = {
    generation: delta.generation,
    marks: delta.marks,
    dim,
    chunkIds,
    llmChunks: (old?.llmChunks ?? 0) + delta.chunks.filter((c) => c.graphSource === "llm").length,
    previous: previousOf,
    next: nextOf,
    vectors: concat(Float32Array, old?.vectors ?? new Float32Array(0), delta.chunkVectors),
    chunkPostings: appendDocuments(
      old?.chunkPostings ?? NO_POSTINGS,
      delta.chunks.map((c) => lexicalTokens(c.text)),
    ),
    entityIds,
    factIds: concat(
      Int32Array,
      old?.factIds ?? new Int32Array(0),
      delta.facts.map((f) => f.id),
    ),
    factSubjects: concat(
      Int32Array,
      old?.factSubjects ?? new Int32Array(0),
      delta.facts.map((f) => entityAt(f.subject)),
    ),
    factObjects: concat(
      Int32Array,
      old?.factObjects ?? new Int32Array(0),
      delta.facts.map((f) => entityAt(f.object)),
    ),
    factVectors: concat(Float32Array, old?.factVectors ?? new Float32Array(0), delta.factVectors),
    factPostings: appendDocuments(
      old?.factPostings ?? NO_POSTINGS,
      delta.facts.map((f) => lexicalTokens(f.text)),
    ),
    edges: {
      ids: edgeIds,
      kind: concat(Uint8Array, old?.edges.kind ?? new Uint8Array(0), delta.edges.kind),
      a: concat(Int32Array, old?.edges.a ?? new Int32Array(0), edgeSources(delta.edges, chunkIds, entityIds)),
      b: concat(Int32Array, old?.edges.b ?? new Int32Array(0), edgeTargets(delta.edges, entityIds)),
      weight,
    },
    vocatives,
  };
  return { ...stored, ...derive(stored, passageCapacity) };
}

/**
 * The graph in node space (CSR), phrase degrees and fact nodes, from the stored parts; phrase nodes
 * from `passageCapacity` on.
 */
export function derive(
  s: Pick<SnapshotArrays, "chunkIds" | "entityIds" | "edges" | "previous" | "factSubjects" | "factObjects">,
  passageCapacity = s.chunkIds.length,
): Pick<
  SnapshotArrays,
  "graph" | "edgeCount" | "phraseChunks" | "factSubject" | "factObject" | "passageCapacity"
> {
  const P = s.chunkIds.length;
  const C = Math.max(P, passageCapacity);
  const { kind, a, b, weight } = s.edges;
  const context = EDGE_KIND.context;
  // Room for the stored edges and one sequence edge per passage.
  const ea = new Int32Array(kind.length + P);
  const eb = new Int32Array(kind.length + P);
  const ew = new Float64Array(kind.length + P);
  const phraseChunks = new Int32Array(s.entityIds.length);
  let m = 0;
  for (let e = 0; e < kind.length; e++) {
    const fromPassage = kind[e] === context;
    const x = fromPassage ? a[e] : a[e] < 0 ? -1 : C + a[e];
    const y = b[e] < 0 ? -1 : C + b[e];
    if (x < 0 || y < 0 || weight[e] <= 0) continue;
    if (fromPassage) phraseChunks[b[e]]++;
    ea[m] = x;
    eb[m] = y;
    ew[m++] = weight[e];
  }
  // Sequence edges: each passage to the next one of its session. They are derived (chunk order within a
  // session), not stored: the answer to a question often sits in the turn after the one that names it.
  if (SEQUENCE_EDGE_WEIGHT > 0) {
    for (let i = 0; i < P; i++) {
      if (s.previous[i] < 0) continue;
      ea[m] = s.previous[i];
      eb[m] = i;
      ew[m++] = SEQUENCE_EDGE_WEIGHT;
    }
  }
  return {
    passageCapacity: C,
    graph: buildCsr(C + s.entityIds.length, ea.subarray(0, m), eb.subarray(0, m), ew.subarray(0, m)),
    edgeCount: m,
    phraseChunks,
    factSubject: entityNodes(s.factSubjects, C),
    factObject: entityNodes(s.factObjects, C),
  };
}

/** Positions of new edges' `a` ends: a passage index for a context edge, else a phrase position. */
function edgeSources(edges: SnapshotDelta["edges"], chunkIds: Int32Array, entityIds: Int32Array): Int32Array {
  const out = new Int32Array(edges.a.length);
  for (let e = 0; e < out.length; e++)
    out[e] = positionOf(edges.kind[e] === EDGE_KIND.context ? chunkIds : entityIds, edges.a[e]);
  return out;
}

/** Phrase positions of new edges' `b` ends. */
function edgeTargets(edges: SnapshotDelta["edges"], entityIds: Int32Array): Int32Array {
  const out = new Int32Array(edges.b.length);
  for (let e = 0; e < out.length; e++) out[e] = positionOf(entityIds, edges.b[e]);
  return out;
}

/**
 * Postings built document by document into typed arrays (a term number, document and frequency per
 * entry), sorted by term once at the end: the same postings as appendDocuments over all the documents,
 * without holding every document's tokens, or an array per term, at once.
 */
export class PostingsBuilder {
  private readonly termNumbers = new Map<string, number>();
  private term = new Int32Array(1 << 12);
  private doc = new Int32Array(1 << 12);
  private tf = new Float32Array(1 << 12);
  private entries = 0;
  private totalLength = 0;
  private readonly docLength: Float32Array;

  constructor(documents: number) {
    this.docLength = new Float32Array(documents);
  }

  /** Document `doc`'s tokens; documents come in ascending order. */
  add(doc: number, tokens: string[]): void {
    this.docLength[doc] = tokens.length;
    this.totalLength += tokens.length;
    const counts = new Map<string, number>();
    for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const [text, tf] of counts) {
      let n = this.termNumbers.get(text);
      if (n === undefined) this.termNumbers.set(text, (n = this.termNumbers.size));
      if (this.entries === this.term.length) this.grow();
      this.term[this.entries] = n;
      this.doc[this.entries] = doc;
      this.tf[this.entries++] = tf;
    }
  }

  private grow(): void {
    const size = this.term.length * 2;
    const term = new Int32Array(size);
    const doc = new Int32Array(size);
    const tf = new Float32Array(size);
    term.set(this.term);
    doc.set(this.doc);
    tf.set(this.tf);
    Object.assign(this, { term, doc, tf });
  }

  finish(): Postings {
    const texts = [...this.termNumbers.keys()];
    const order = Array.from(texts, (_, i) => i).sort((a, b) =>
      texts[a] < texts[b] ? -1 : texts[a] > texts[b] ? 1 : 0,
    );
    const rank = new Int32Array(texts.length);
    order.forEach((n, r) => {
      rank[n] = r;
    });
    const start = new Uint32Array(texts.length + 1);
    for (let e = 0; e < this.entries; e++) start[rank[this.term[e]] + 1]++;
    for (let r = 0; r < texts.length; r++) start[r + 1] += start[r];
    // Entries come in document order, so a stable placement keeps each term's documents ascending.
    const fill = start.slice(0, texts.length);
    const docs = new Int32Array(this.entries);
    const tfs = new Float32Array(this.entries);
    for (let e = 0; e < this.entries; e++) {
      const at = fill[rank[this.term[e]]]++;
      docs[at] = this.doc[e];
      tfs[at] = this.tf[e];
    }
    return {
      terms: arrayTerms(order.map((n) => texts[n])),
      start,
      docs,
      tfs,
      docLength: this.docLength,
      totalLength: this.totalLength,
    };
  }
}

/** 1, 2, … n: row ids for edges that carry none. */
function ordinals(n: number): Int32Array {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = i + 1;
  return out;
}

/** Graph nodes of entity positions (phrases follow the passage capacity C; -1 stays -1). */
function entityNodes(positions: ArrayLike<number>, C: number): Int32Array {
  const out = new Int32Array(positions.length);
  for (let i = 0; i < positions.length; i++) out[i] = positions[i] < 0 ? -1 : C + positions[i];
  return out;
}

/**
 * A whole snapshot (read through the MemoryStore interface, vectors already in the current model's
 * space) as a delta from nothing. The snapshot's edges carry no row ids; their order stands in.
 */
export function deltaOfSnapshot(
  snapshot: StoreSnapshot,
  chunkVectors: Float32Array,
  factVectors: Float32Array,
  dim: number,
): SnapshotDelta {
  const labels = new Map(snapshot.entities.map((e) => [e.id, e.label]));
  const { kind, a, b, weight } = snapshot.edges;
  return {
    generation: snapshot.generation,
    marks: NO_MARKS,
    dim,
    chunks: snapshot.chunks,
    chunkVectors,
    sessionTails: new Map(),
    entityIds: snapshot.entities.map((e) => e.id),
    facts: snapshot.facts.map((f) => ({
      id: f.id,
      subject: f.subject,
      object: f.object,
      text: `${labels.get(f.subject) ?? ""} ${f.predicate} ${labels.get(f.object) ?? ""}`,
    })),
    factVectors,
    edges: { ids: ordinals(kind.length), kind, a, b, weight },
    weights: [],
  };
}
