/**
 * Opening a project's memory store: the local SQLite file, or (openConfiguredStore) whichever backend
 * `storage` in `.triforge/config.json` names; the Postgres one implements the same MemoryStore.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { projectDataDir, recallSnapshotPath, snapshotFiles, storePath } from "../home/paths.ts";
import type { SqlClient } from "./pg-client.ts";
import type { StorageTarget } from "./settings.ts";
import { isStoreDamage, removeCacheFilesOf, SqliteMemoryStore, StoreCorruptError } from "./sqlite.ts";
import type { MemoryStore } from "./types.ts";

export type { MemoryStore } from "./types.ts";
export { isStoreDamage, SqliteMemoryStore, StoreCorruptError };

/** Opens (creating) the project's store for writing. Throws StoreCorruptError for a damaged file. */
export function openStoreForWrite(projectRoot: string): SqliteMemoryStore {
  mkdirSync(projectDataDir(projectRoot), { recursive: true });
  return new SqliteMemoryStore(storePath(projectRoot));
}

/** Whether the project has a local store file yet (without opening it: an open checks the file). */
export function hasStore(projectRoot: string): boolean {
  return existsSync(storePath(projectRoot));
}

/** Opens an existing store read-only, or undefined when there is none yet. */
export function openStoreForRead(projectRoot: string): SqliteMemoryStore | undefined {
  return openStoreFileForRead(storePath(projectRoot));
}

/** Opens an existing store file read-only (the local store, or the mirror of a shared one). */
export function openStoreFileForRead(path: string): SqliteMemoryStore | undefined {
  if (!existsSync(path)) return undefined;
  return new SqliteMemoryStore(path, { readonly: true });
}

/**
 * Moves a damaged store aside (kept once, as `memory.db.corrupt`, for a bug report; a directory in its
 * place too) so the indexer can rebuild it from chats.jsonl.
 */
export function discardStore(projectRoot: string): void {
  const path = storePath(projectRoot);
  // The recall snapshot, the phrase and heads files name this store's rows; the rebuilt store numbers them anew.
  for (const file of snapshotFiles(recallSnapshotPath(projectRoot)))
    rmSync(file, { force: true, recursive: true });
  removeCacheFilesOf(path);
  for (const suffix of ["-wal", "-shm"]) rmSync(path + suffix, { force: true });
  if (existsSync(path)) {
    rmSync(`${path}.corrupt`, { force: true, recursive: true });
    renameSync(path, `${path}.corrupt`);
  }
}

/**
 * Opens the store the project's config names: the local SQLite file (created), or the project's schema
 * in Postgres (created or migrated; `connect` is for tests). Throws one line when the backend's settings
 * are missing or its server cannot be reached.
 */
export async function openConfiguredStore(
  projectRoot: string,
  connect?: (target: Exclude<StorageTarget, { kind: "local" }>) => Promise<SqlClient>,
): Promise<MemoryStore> {
  const { readProjectConfig } = await import("../project/config.ts");
  const { storageTarget, writerName } = await import("./settings.ts");
  const config = readProjectConfig(projectRoot);
  const target = storageTarget(config.storage, config, projectRoot);
  if (target.kind === "local") return openStoreForWrite(projectRoot);
  const { PgMemoryStore } = await import("./postgres.ts");
  const client = await (connect ?? (await import("./remote.ts")).connectRemote)(target);
  return PgMemoryStore.open(client, { project: target.project, writer: writerName(projectRoot) });
}
