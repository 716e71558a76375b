/**
 * The shared store a team's machines write one project's memory into (`storage: postgres`, InsForge
 * next): what the push, the local mirror and forget ask of it, and how the configured one is opened. The
 * indexer still indexes into the local SQLite store and pushes its new rows here by natural keys; recall
 * reads a local mirror of this store (memory/shared.ts) pulled by row id since its last marks.
 */
import { redactUrl, type SqlClient } from "./pg-client.ts";
import type { StorageTarget } from "./settings.ts";
import type { GraphSource, MemoryStore, SummaryRewrite } from "./types.ts";

export type RemoteTarget = Exclude<StorageTarget, { kind: "local" }>;

/** Which version of the shared store a mirror was pulled from: another identity or deletion count means a whole pull. */
export interface RemoteMarks {
  store: string;
  generation: number;
  deletions: number;
}

/** The highest row ids a mirror holds, with the remote's marks it was pulled at. */
export interface MirrorMarks extends RemoteMarks {
  chunk: number;
  entity: number;
  fact: number;
  edge: number;
}

/** The chunks and the graph built from them: what a push sends and a pull adds to a mirror. */
export const GRAPH_TABLES = [
  "chunks",
  "turns",
  "entities",
  "facts",
  "fact_sources",
  "edges",
  "edge_sources",
] as const;

/** The tables a mirror holds (columns named as in migrate.ts's TABLES). */
export const MIRROR_TABLES = [...GRAPH_TABLES, "summaries", "forgotten"] as const;

/** A chunks row as every store's table holds it (SQLite, Postgres, a mirror). */
export interface ChunkRow {
  id: number;
  hash: string;
  session_id: string;
  ts: string;
  text: string;
  graph_source: GraphSource;
  model: string;
  vector: Uint8Array;
}
export type MirrorTable = (typeof MIRROR_TABLES)[number];

/**
 * Rows the mirror lacks. Incremental (`whole` false): chunks, entities, facts, edges above the marks;
 * turns, fact_sources, edge_sources of chunks above the chunk mark; summaries and forgotten whole (small,
 * and summaries are edited in place); `weights` of earlier edges a new chunk added to. Whole: everything.
 */
export interface RemoteChanges {
  marks: MirrorMarks;
  whole: boolean;
  rows: Record<MirrorTable, Record<string, unknown>[]>;
  weights: { id: number; weight: number }[];
}

export interface RemoteStore extends MemoryStore {
  /** Where it is, for status and doctor, never with a secret (`postgres://u@host:5432/db`). */
  readonly location: string;
  marks(): Promise<RemoteMarks>;
  changesSince(since: MirrorMarks | undefined): Promise<RemoteChanges>;
  schemaVersion(): Promise<number>;
  /** Record uuids deleted one by one (a chunk's Delete) on some machine; a backend without them has none. */
  forgottenRecords?(): Promise<Set<string>>;
  /** Deletes the chunks holding these records, as MemoryStore.forgetChunk does, and remembers the uuids. */
  forgetRecords?(uuids: string[], rewrite: SummaryRewrite): Promise<number>;
  /** Waits for pending writes, then closes the connection. */
  closeAsync(): Promise<void>;
}

/** Opens a connection to what a non-local target names (for tests: a PGlite client instead). */
export type Connect = (target: RemoteTarget) => Promise<SqlClient>;

export async function connectRemote(target: RemoteTarget): Promise<SqlClient> {
  if (target.kind === "postgres") return (await import("./pg-client.ts")).connectPostgres(target.url);
  return (await import("./insforge-client.ts")).connectInsforge(target);
}

/** The target's place as status shows it: no password, no key. */
export function describeTarget(target: RemoteTarget): string {
  return target.kind === "postgres" ? redactUrl(target.url) : target.baseUrl;
}

export interface OpenRemoteOptions {
  /** This machine's checkout (settings.writerName). */
  writer: string;
  connect?: Connect;
  /** Only reads (recall, status): no schema migration, no LLM cache loaded. */
  reader?: boolean;
  /** false: the LLM cache is not loaded (the push never asks it). */
  llmCache?: boolean;
}

/** Opens the shared store a target names. Throws StoreUnavailableError (one line, no secret) when it cannot. */
export async function openRemoteStore(
  target: RemoteTarget,
  options: OpenRemoteOptions,
): Promise<RemoteStore> {
  const client = await (options.connect ?? connectRemote)(target);
  const [{ PgMemoryStore }, { InsforgeClient }] = await Promise.all([
    import("./postgres.ts"),
    import("./insforge-client.ts"),
  ]);
  try {
    // InsForge's endpoint runs no transaction across calls: its store writes each batch as one script.
    if (client instanceof InsforgeClient)
      return await (await import("./insforge.ts")).InsforgeMemoryStore.open(client, {
        project: target.project,
        writer: options.writer,
        reader: options.reader,
        llmCache: options.llmCache,
      });
    return await PgMemoryStore.open(client, {
      project: target.project,
      writer: options.writer,
      location: describeTarget(target),
      reader: options.reader,
      llmCache: options.llmCache,
    });
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
}
