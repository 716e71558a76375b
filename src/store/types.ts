/**
 * The memory store's interface. The local SQLite backend implements it now; a Postgres+pgvector backend
 * can implement it later without touching the indexer or recall: every method is async and coarse
 * (one call per batch or per snapshot), so a network round trip per call stays affordable.
 */
import type { ResultCache } from "../llm/cache.ts";
import type { LlmUsage, UsageSink } from "../llm/usage.ts";

/** One turn inside a chunk: where its text sits in the chunk's text. */
export interface Turn {
  uuid: string;
  role: "user" | "assistant";
  ts: string;
  start: number;
  end: number;
}

/** The unit of memory: a user turn and the assistant's reply to it, turn boundaries kept. */
export interface Chunk {
  hash: string;
  sessionId: string;
  /** The first turn's time. */
  ts: string;
  /** The turns' texts joined by TURN_SEPARATOR; `turns` hold each one's span. */
  text: string;
  turns: Turn[];
}

/** Where a chunk's part of the knowledge graph came from. `llm-pending`: local for now, LLM retried next run. */
export type GraphSource = "local" | "llm" | "llm-pending" | "openie-cache";

/** A phrase node as a chunk mentions it: `phrase` is the normalised key, `label` a readable form. */
export interface EntityMention {
  phrase: string;
  label: string;
}

/** A triple between two phrase keys that the same chunk also mentions. */
export interface FactMention {
  subject: string;
  predicate: string;
  object: string;
}

/** The knowledge-graph part one chunk contributes: its phrase nodes (context edges) and facts. */
export interface ChunkGraph {
  entities: EntityMention[];
  facts: FactMention[];
}

export interface NewChunk extends Chunk {
  vector: Float32Array;
  graph: ChunkGraph;
  graphSource: GraphSource;
}

/** One summary entry of `summary.md` (`## <date> · session <id>` then the text). */
export interface SummaryEntry {
  sessionId: string;
  /** YYYY-MM-DD of the session's chunks. */
  date: string;
  /** Sort key: the newest chunk's time. */
  ts: string;
  text: string;
  /** `llm` or `extractive`. */
  source: string;
}

export interface SynonymEdge {
  a: string;
  b: string;
  score: number;
}

/** Everything one indexing step writes; the store applies it atomically (all or nothing). */
export interface IndexBatch {
  model: string;
  chunks: NewChunk[];
  /** Vectors for phrases and facts the store may not hold yet (keys: phrase, factKey). */
  entityVectors: Map<string, Float32Array>;
  factVectors: Map<string, Float32Array>;
  /** Synonym edges added, or changed, by this batch's new phrases (synonyms.ts SynonymGraph). */
  synonyms: SynonymEdge[];
  /** Synonym edges no longer kept: a new phrase pushed each out of both its ends' nearest neighbours. */
  synonymsDropped?: { a: string; b: string }[];
  summaries: SummaryEntry[];
}

export interface IndexState {
  /** Bytes of chats.jsonl fully consumed. */
  offset: number;
  /** Hash of the line that ends at `offset`: a rewritten file no longer matches and is rescanned. */
  offsetCheck: string;
  lastIndexed: string | null;
  /** Bumped by every write: a warm snapshot compares it to know when to reload. */
  generation: number;
  /**
   * chats.jsonl was read whole once since the indexer started rewriting flagged lines, so lines flagged
   * and indexed by an older version were rewritten too.
   */
  reviewSwept: boolean;
}

/** Everything recall needs, loaded at once and kept warm in a long-lived process. */
export interface StoreSnapshot {
  generation: number;
  dim: number;
  chunks: {
    id: number;
    sessionId: string;
    ts: string;
    text: string;
    graphSource: GraphSource;
    turns: Turn[];
  }[];
  /** Row i is chunk i's vector; `chunkModels[i]` its model (re-embedded when it differs from the current). */
  chunkVectors: Float32Array;
  chunkModels: string[];
  entities: { id: number; phrase: string; label: string }[];
  facts: { id: number; subject: number; predicate: string; object: number }[];
  factVectors: Float32Array;
  factModels: string[];
  /** Undirected weighted edges; `kind` 0 fact (entity–entity), 1 context (chunk–entity), 2 synonym. */
  edges: { kind: Uint8Array; a: Int32Array; b: Int32Array; weight: Float64Array };
}

/**
 * Local backend only (a persisted recall snapshot): the highest row ids some arrays cover, and the
 * store's count of deletions when they were built.
 */
export interface SnapshotMarks {
  chunk: number;
  entity: number;
  fact: number;
  edge: number;
  deletions: number;
  /** The store file's identity (`""`: none yet, every row is new). */
  store: string;
}

/** Rows added to a store since some marks (all rows when extending nothing). */
export interface SnapshotDelta {
  generation: number;
  marks: SnapshotMarks;
  dim: number;
  /** Ascending ids, all above the previous marks. */
  chunks: {
    id: number;
    sessionId: string;
    text: string;
    graphSource: string;
    turns: { role: "user" | "assistant"; start: number; end: number }[];
  }[];
  /** Row i is chunks[i]'s vector. */
  chunkVectors: Float32Array;
  /** For a session with chunks before the marks: its last such chunk's id (the new chunks' predecessor). */
  sessionTails: Map<string, number>;
  entityIds: number[];
  facts: { id: number; subject: number; object: number; text: string }[];
  factVectors: Float32Array;
  /** New edges, ascending ids; `a` and `b` are row ids (chunk or phrase, by kind). Typed: millions of them. */
  edges: { ids: Int32Array; kind: Uint8Array; a: Int32Array; b: Int32Array; weight: Float64Array };
  /** Edges the previous arrays hold whose weight changed (a new chunk added to a fact edge). */
  weights: { id: number; weight: number }[];
}

export const NO_MARKS: SnapshotMarks = { chunk: 0, entity: 0, fact: 0, edge: 0, deletions: 0, store: "" };

export const EDGE_KIND = { fact: 0, context: 1, synonym: 2 } as const;

export interface StoreStatus {
  chunks: number;
  sessions: number;
  entities: number;
  facts: number;
  edges: { fact: number; context: number; synonym: number };
  lastIndexed: string | null;
  llmUsage: { provider: string; model: string; calls: number; inputTokens: number; outputTokens: number }[];
  /** The same counts for the current calendar month (UTC). */
  llmUsageThisMonth: StoreStatus["llmUsage"];
  pendingLlm: number;
}

export interface ForgetResult {
  chunks: number;
  facts: number;
  entities: number;
  edgesRemoved: number;
  edgesLowered: number;
}

/** What `forgetChunk` removed, beside the graph: where the chunk came from and its summary lines. */
export interface ChunkForgetResult extends ForgetResult {
  sessionId: string;
  /** The uuids of the chats.jsonl records the chunk was made of, now remembered as forgotten. */
  uuids: string[];
  /** Lines `rewrite` took out of the session's summary entries (an entry left empty is removed). */
  summaryLines: number;
}

/**
 * A session's summary entry without what came from a removed chunk: `entry` is the entry's text,
 * `removed` the chunk's, `kept` the texts of the session's other chunks. "" removes the entry.
 */
export type SummaryRewrite = (entry: string, removed: string, kept: string[]) => string;

/**
 * The store is also the LLM result cache (OpenIE and summaries, keyed `<kind>:v<n>:<chunk hash>`), so
 * re-indexing never pays twice and `forget` removes a session's cached results with its chunks.
 */
export interface MemoryStore extends UsageSink, ResultCache {
  readonly backend: string;
  state(): Promise<IndexState>;
  setState(state: Partial<IndexState>): Promise<void>;
  /**
   * The record uuids among `uuids` that some chunk already holds (dedupe after a crash or a rescan), or
   * that a forgotten chunk held (`forgetChunk`): neither is indexed again.
   */
  indexedRecords(uuids: string[]): Promise<Set<string>>;
  forgottenSessions(): Promise<Set<string>>;
  /** Whether some chunk of the session is stored (forget refuses an id it has never seen). */
  hasSession(sessionId: string): Promise<boolean>;
  /** Every phrase node with its vector (for synonym edges of new phrases). */
  entityVectors(): Promise<{ phrases: string[]; vectors: Float32Array; models: string[] }>;
  writeBatch(batch: IndexBatch): Promise<void>;
  get(key: string): string | undefined;
  set(key: string, value: string): void;
  /** Chunks whose LLM extraction failed and should be retried. */
  pendingLlmChunks(limit: number): Promise<{ id: number; hash: string; text: string }[]>;
  /** Replaces one chunk's graph contribution (after a retried LLM extraction) atomically. */
  replaceChunkGraph(
    chunkId: number,
    graph: ChunkGraph,
    source: GraphSource,
    vectors: Omit<IndexBatch, "chunks" | "summaries">,
  ): Promise<void>;
  /** Removes a session's chunks and exactly what they contributed; remembers the session as forgotten. */
  forgetSession(sessionId: string): Promise<ForgetResult>;
  /**
   * Removes one chunk and exactly what it contributed (graph weight, turns, cached LLM results),
   * remembers its records' uuids as forgotten (`indexedRecords` counts them, so they are never indexed
   * again), and rewrites its session's summary entries with `rewrite`, in one transaction. Undefined
   * when no chunk has that id. Optional while only the SQLite store (the local one, which `forget`
   * changes) has it.
   */
  forgetChunk?(chunkId: number, rewrite: SummaryRewrite): Promise<ChunkForgetResult | undefined>;
  summaries(): Promise<SummaryEntry[]>;
  /**
   * Replaces the line `line` of the session's summary entries with `replacement` (a person's correction,
   * from the web page); how many entries held it. The replaced text does not stay in the file's free pages.
   */
  replaceSummaryLine(sessionId: string, line: string, replacement: string): Promise<number>;
  snapshot(): Promise<StoreSnapshot>;
  status(): Promise<StoreStatus>;
  usage(): Promise<StoreStatus["llmUsage"]>;
  record(usage: LlmUsage): void;
  close(): void;
}
