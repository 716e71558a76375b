/**
 * Opening a project's memory store. Only the local SQLite backend exists today; `storage` in
 * `.triforge/config.json` names the backend, and a Postgres one implements the same MemoryStore.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { projectDataDir, recallSnapshotPath, storePath } from "../home/paths.ts";
import { isStoreDamage, SqliteMemoryStore, StoreCorruptError } from "./sqlite.ts";

export type { MemoryStore } from "./types.ts";
export { isStoreDamage, SqliteMemoryStore, StoreCorruptError };

/** Opens (creating) the project's store for writing. Throws StoreCorruptError for a damaged file. */
export function openStoreForWrite(projectRoot: string): SqliteMemoryStore {
  mkdirSync(projectDataDir(projectRoot), { recursive: true });
  return new SqliteMemoryStore(storePath(projectRoot));
}

/** Opens an existing store read-only, or undefined when there is none yet. */
export function openStoreForRead(projectRoot: string): SqliteMemoryStore | undefined {
  const path = storePath(projectRoot);
  if (!existsSync(path)) return undefined;
  return new SqliteMemoryStore(path, { readonly: true });
}

/**
 * Moves a damaged store aside (kept once, as `memory.db.corrupt`, for a bug report; a directory in its
 * place too) so the indexer can rebuild it from chats.jsonl.
 */
export function discardStore(projectRoot: string): void {
  const path = storePath(projectRoot);
  // The recall snapshot names this store's rows; the rebuilt store numbers them anew.
  rmSync(recallSnapshotPath(projectRoot), { force: true, recursive: true });
  for (const suffix of ["-wal", "-shm"]) rmSync(path + suffix, { force: true });
  if (existsSync(path)) {
    rmSync(`${path}.corrupt`, { force: true, recursive: true });
    renameSync(path, `${path}.corrupt`);
  }
}
