/**
 * What a store added since a persisted snapshot's base was written, in the form recall reads beside the
 * base (`recall.add.bin`): the new passages' and facts' rows and postings, the edges since as rows of a
 * second CSR over every node, and the few arrays of every passage or phrase that new rows change
 * (session neighbours, phrase degrees, node strengths), whole. Built from the base and the store's
 * delta since the base's marks, so its cost follows the rows added since the base, not the store: the
 * base (the bulk of the bytes) is written once and read by every run after it until the additions grow
 * past a share of it (snapshot-file.ts folds them in then).
 */
import { EDGE_KIND, type SnapshotDelta, type SnapshotMarks } from "../../store/types.ts";
import { lexicalTokens } from "../tokens.ts";
import { appendDocuments, NO_POSTINGS, type Postings } from "./bm25.ts";
import { buildCsr, type CsrRows } from "./ppr.ts";
import { linkSessions, positionOf, SEQUENCE_EDGE_WEIGHT, type SnapshotArrays } from "./snapshot-build.ts";
import { guardOf } from "./snapshot-pages.ts";
import { countVocatives, type VocativeCounts } from "./speakers.ts";

export interface SnapshotAdditions {
  /** The base these extend (its header's CRC): additions to another base are not used. */
  base: number;
  generation: number;
  marks: SnapshotMarks;
  llmChunks: number;
  vocatives: VocativeCounts;
  edgeCount: number;
  /** The new passages (indices from the base's count on): row ids, vectors, postings (documents from 0). */
  chunkIds: Int32Array;
  vectors: Float32Array;
  chunkPostings: Postings;
  /** Every passage's session neighbours (-1 at the ends). */
  previous: Int32Array;
  next: Int32Array;
  /** The new phrases' row ids (positions from the base's count on). */
  entityIds: Int32Array;
  /** The new facts: row ids, graph nodes of subject and object (-1: none), vectors, postings. */
  factIds: Int32Array;
  factSubject: Int32Array;
  factObject: Int32Array;
  factVectors: Float32Array;
  factPostings: Postings;
  /** Every phrase's passage count and every node's strength, base and additions together. */
  phraseChunks: Int32Array;
  strength: Float64Array;
  /** Rows over every node: the edges since the base, and the changes of the base edges' weights. */
  rows: CsrRows;
}

/** Whether these rows fit beside the base: passages within its capacity. */
export function fitsBase(base: SnapshotArrays, delta: SnapshotDelta): boolean {
  return base.chunkIds.length + delta.chunks.length <= base.passageCapacity;
}

/** The additions to `base` of `delta`, the store's rows since the base's marks. */
export function additionsOf(base: SnapshotArrays, baseCrc: number, delta: SnapshotDelta): SnapshotAdditions {
  // A base mapped from recall.bin is checked where it is read (the indexer checks only a window of
  // it a run): what is copied or searched, whole; the edge rows looked up by position, each (below).
  for (const read of [
    base.chunkIds,
    base.previous,
    base.next,
    base.entityIds,
    base.phraseChunks,
    base.graph.strength,
    base.edges.ids,
  ])
    guardOf(read)?.all();
  const edgeRows = [base.edges.weight, base.edges.a, base.edges.b, base.edges.kind].map(guardOf);
  const C = base.passageCapacity;
  const baseChunks = base.chunkIds.length;
  const baseEntities = base.entityIds.length;
  const chunkIds = Int32Array.from(delta.chunks, (c) => c.id);
  const entityIds = Int32Array.from(delta.entityIds);
  const P = baseChunks + chunkIds.length;
  const E = baseEntities + entityIds.length;
  const nodes = C + E;
  const passageAt = (id: number) => {
    const at = positionOf(base.chunkIds, id);
    if (at >= 0) return at;
    const added = positionOf(chunkIds, id);
    return added < 0 ? -1 : baseChunks + added;
  };
  const phraseAt = (id: number) => {
    const at = positionOf(base.entityIds, id);
    if (at >= 0) return at;
    const added = positionOf(entityIds, id);
    return added < 0 ? -1 : baseEntities + added;
  };
  const previous = new Int32Array(P).fill(-1);
  const next = new Int32Array(P).fill(-1);
  previous.set(base.previous);
  next.set(base.next);
  linkSessions(previous, next, delta, baseChunks, passageAt);
  const vocatives = structuredClone(base.vocatives);
  countVocatives(
    vocatives,
    delta.chunks.flatMap((c) => c.turns.map((t) => ({ role: t.role, text: c.text.slice(t.start, t.end) }))),
  );
  const phraseChunks = new Int32Array(E);
  phraseChunks.set(base.phraseChunks);
  // The graph's new entries: edges since the base, sequence edges of the new passages, and for each base
  // edge whose weight changed the difference (an edge left at weight ≤ 0 is not in the graph).
  const ea: number[] = [];
  const eb: number[] = [];
  const ew: number[] = [];
  let edgeCount = base.edgeCount;
  const effective = (w: number) => Math.max(w, 0);
  const { edges } = delta;
  for (let e = 0; e < edges.ids.length; e++) {
    const context = edges.kind[e] === EDGE_KIND.context;
    const a = context ? passageAt(edges.a[e]) : phraseAt(edges.a[e]);
    const b = phraseAt(edges.b[e]);
    if (a < 0 || b < 0 || !(edges.weight[e] > 0)) continue;
    if (context) phraseChunks[b]++;
    ea.push(context ? a : C + a);
    eb.push(C + b);
    ew.push(edges.weight[e]);
    edgeCount++;
  }
  for (let i = baseChunks; i < P; i++) {
    if (previous[i] < 0) continue;
    ea.push(previous[i]);
    eb.push(i);
    ew.push(SEQUENCE_EDGE_WEIGHT);
    edgeCount++;
  }
  const changedOnce = new Map(delta.weights.map((w) => [w.id, w.weight]));
  for (const [id, weight] of changedOnce) {
    const at = positionOf(base.edges.ids, id);
    if (at < 0) continue;
    for (const guard of edgeRows) guard?.at(at);
    const before = effective(base.edges.weight[at]);
    const after = effective(weight);
    const a = base.edges.a[at];
    const b = base.edges.b[at];
    if (before === after || a < 0 || b < 0) continue;
    const context = base.edges.kind[at] === EDGE_KIND.context;
    if (before === 0) edgeCount++;
    if (after === 0) edgeCount--;
    if (context && (before === 0) !== (after === 0)) phraseChunks[b] += after > 0 ? 1 : -1;
    ea.push(context ? a : C + a);
    eb.push(C + b);
    ew.push(after - before);
  }
  const rows = buildCsr(nodes, Int32Array.from(ea), Int32Array.from(eb), Float64Array.from(ew));
  const strength = new Float64Array(nodes);
  strength.set(base.graph.strength);
  for (let i = 0; i < nodes; i++) strength[i] += rows.strength[i];
  const nodeOf = (id: number) => {
    const at = phraseAt(id);
    return at < 0 ? -1 : C + at;
  };
  return {
    base: baseCrc,
    generation: delta.generation,
    marks: delta.marks,
    llmChunks: base.llmChunks + delta.chunks.filter((c) => c.graphSource === "llm").length,
    vocatives,
    edgeCount,
    chunkIds,
    vectors: delta.chunkVectors,
    chunkPostings: appendDocuments(
      NO_POSTINGS,
      delta.chunks.map((c) => lexicalTokens(c.text)),
    ),
    previous,
    next,
    entityIds,
    factIds: Int32Array.from(delta.facts, (f) => f.id),
    factSubject: Int32Array.from(delta.facts, (f) => nodeOf(f.subject)),
    factObject: Int32Array.from(delta.facts, (f) => nodeOf(f.object)),
    factVectors: delta.factVectors,
    factPostings: appendDocuments(
      NO_POSTINGS,
      delta.facts.map((f) => lexicalTokens(f.text)),
    ),
    phraseChunks,
    strength,
    rows: { offsets: rows.offsets, column: rows.column, weight: rows.weight },
  };
}
