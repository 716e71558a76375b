/**
 * The RAG service's own file (`triforge ingest --db`, claw-rag-service's `CLAW_RAG_DB`): which workspaces
 * are ingested, and, when an OpenAI-compatible embeddings endpoint is configured, the remote vector of
 * every code chunk keyed by the chunk's text. The code itself stays in each workspace's code-search index;
 * ingesting one workspace touches only that workspace's rows, never another's (claw-rag-service's ingest
 * deletes the chunks of every workspace it was not given this time).
 */
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

export interface WorkspaceRecord {
  /** Real absolute path of the folder. */
  root: string;
  ingestedAt: string;
  files: number;
  chunks: number;
}

/** The embeddings model the stored remote vectors came from. */
export interface VectorSpace {
  model: string;
  dim: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS workspaces(root TEXT PRIMARY KEY, ingested_at TEXT NOT NULL, files INTEGER NOT NULL, chunks INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors(workspace TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY(workspace, hash)) WITHOUT ROWID;
`;

/** The key of a chunk's text: equal texts share one remote vector. */
export function chunkKey(text: string): string {
  return Bun.hash(text).toString(16);
}

export class Catalog {
  private constructor(private readonly db: Database) {}

  static open(path: string): Catalog {
    mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path, { create: true });
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA busy_timeout = 5000");
    db.run(SCHEMA);
    return new Catalog(db);
  }

  workspaces(): WorkspaceRecord[] {
    return (
      this.db.query("SELECT root, ingested_at, files, chunks FROM workspaces ORDER BY root").all() as {
        root: string;
        ingested_at: string;
        files: number;
        chunks: number;
      }[]
    ).map((r) => ({ root: r.root, ingestedAt: r.ingested_at, files: r.files, chunks: r.chunks }));
  }

  record(workspace: WorkspaceRecord): void {
    this.db
      .query(
        "INSERT INTO workspaces(root, ingested_at, files, chunks) VALUES (?, ?, ?, ?) ON CONFLICT(root) DO UPDATE SET ingested_at = excluded.ingested_at, files = excluded.files, chunks = excluded.chunks",
      )
      .run(workspace.root, workspace.ingestedAt, workspace.files, workspace.chunks);
  }

  vectorSpace(): VectorSpace | undefined {
    const model = this.meta("vector_model");
    const dim = Number(this.meta("vector_dim"));
    return model && dim > 0 ? { model, dim } : undefined;
  }

  /** Vectors of another model or dimension cannot be compared with the new ones: they all go. */
  setVectorSpace(space: VectorSpace): void {
    const current = this.vectorSpace();
    if (current && current.model === space.model && current.dim === space.dim) return;
    this.db.transaction(() => {
      this.db.run("DELETE FROM vectors");
      this.setMeta("vector_model", space.model);
      this.setMeta("vector_dim", String(space.dim));
    })();
  }

  /** The stored remote vectors of a workspace, by chunk key. */
  vectors(workspace: string): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    for (const row of this.db
      .query("SELECT hash, vector FROM vectors WHERE workspace = ?")
      .all(workspace) as {
      hash: string;
      vector: Uint8Array;
    }[]) {
      out.set(
        row.hash,
        new Float32Array(
          row.vector.buffer.slice(row.vector.byteOffset, row.vector.byteOffset + row.vector.byteLength),
        ),
      );
    }
    return out;
  }

  /** The chunk keys a workspace has a stored remote vector for (the vectors themselves are not read). */
  vectorKeys(workspace: string): Set<string> {
    const rows = this.db.query("SELECT hash FROM vectors WHERE workspace = ?").all(workspace) as {
      hash: string;
    }[];
    return new Set(rows.map((row) => row.hash));
  }

  /** Stores new vectors of a workspace and drops those of texts it no longer has, in one transaction. */
  replaceVectors(workspace: string, added: Map<string, Float32Array>, keep: Set<string>): void {
    this.db.transaction(() => {
      const insert = this.db.query(
        "INSERT OR REPLACE INTO vectors(workspace, hash, vector) VALUES (?, ?, ?)",
      );
      for (const [hash, vector] of added)
        insert.run(workspace, hash, new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength));
      const drop = this.db.query("DELETE FROM vectors WHERE workspace = ? AND hash = ?");
      for (const hash of this.vectorKeys(workspace)) if (!keep.has(hash)) drop.run(workspace, hash);
    })();
  }

  close(): void {
    this.db.close();
  }

  private meta(key: string): string | undefined {
    return (this.db.query("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | null)
      ?.value;
  }

  private setMeta(key: string, value: string): void {
    this.db.query("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").run(key, value);
  }
}
