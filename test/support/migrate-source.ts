/** The source a `migrate` suite copies: a project really indexed, with its snapshot and file hash to compare. */
import { expect } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { storePath } from "../../src/home/paths.ts";
import { indexProject } from "../../src/memory/indexer.ts";
import { readProjectConfig } from "../../src/project/config.ts";
import type { MigrateOptions, MigrateReport } from "../../src/store/migrate.ts";
import { SqliteMemoryStore } from "../../src/store/sqlite.ts";
import { appendRecords, type memoryHome, syntheticConversation } from "./memory-helpers.ts";

export const fileHash = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

export type SourceSnapshot = Awaited<ReturnType<SqliteMemoryStore["snapshot"]>>;

/** A project `name` indexed from a synthetic conversation: its root, its store's snapshot and its SHA-256. */
export async function indexedSource(
  home: ReturnType<typeof memoryHome>,
  name: string,
): Promise<{ root: string; original: SourceSnapshot; originalHash: string }> {
  const root = home.project(name);
  appendRecords(root, syntheticConversation(4, 5));
  await indexProject(root, { llm: null });
  const store = new SqliteMemoryStore(storePath(root), { readonly: true });
  const original = await store.snapshot();
  store.close();
  return { root, original, originalHash: fileHash(storePath(root)) };
}

/**
 * The run after a copy to `storage` was cut off half-way: the tables the first run finished are verified,
 * not copied again, the config switches to `storage` under `project`, and the source file is unchanged.
 */
export async function expectCopyResumed(
  copy: (onTable: MigrateOptions["onTable"]) => Promise<MigrateReport>,
  source: { root: string; original: SourceSnapshot; originalHash: string },
  storage: "postgres" | "insforge",
  project: string,
): Promise<Record<string, unknown>> {
  const copied: string[] = [];
  const report = await copy((table, _rows, now) => {
    if (now) copied.push(table);
  });
  expect(copied).not.toContain("chunks");
  expect(copied.length).toBeGreaterThan(0);
  expect(report.tables.find((t) => t.name === "chunks")?.rows).toBe(source.original.chunks.length);
  const config = readProjectConfig(source.root) as unknown as Record<string, unknown> & { storage: string };
  expect(config.storage).toBe(storage);
  expect((config[storage] as { project: string }).project).toBe(project);
  expect(fileHash(storePath(source.root))).toBe(source.originalHash);
  return config;
}
