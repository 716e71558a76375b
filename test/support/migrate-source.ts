/** The source a `migrate` suite copies: a project really indexed, with its snapshot and file hash to compare. */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { storePath } from "../../src/home/paths.ts";
import { indexProject } from "../../src/memory/indexer.ts";
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
