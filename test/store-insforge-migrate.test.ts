/**
 * `triforge migrate` between the local store and InsForge (the contract server): a really indexed store
 * copied through InsForge's raw SQL endpoint and verified by count and SHA-256 per table; a server killed
 * half-way through the copy switches nothing and changes no source byte, and the next run copies only
 * the rest; the way back rebuilds a local store equal to the original.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { storePath } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { readProjectConfig } from "../src/project/config.ts";
import { InsforgeClient } from "../src/store/insforge-client.ts";
import { InsforgeMemoryStore } from "../src/store/insforge.ts";
import { migrateStore } from "../src/store/migrate.ts";
import { StoreUnavailableError } from "../src/store/pg-client.ts";
import { storageTarget } from "../src/store/settings.ts";
import { SqliteMemoryStore } from "../src/store/sqlite.ts";
import { type FakeInsforge, startFakeInsforge } from "./support/fakes/insforge.ts";
import { failure } from "./support/helpers.ts";
import { appendRecords, memoryHome, syntheticConversation } from "./support/memory-helpers.ts";

const home = memoryHome();
const fileHash = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("migrate local ⇄ insforge (contract server)", () => {
  let fake: FakeInsforge;
  let root: string;
  let original: Awaited<ReturnType<SqliteMemoryStore["snapshot"]>>;
  let originalHash: string;
  const name = `migrate-insforge-${process.pid}-${Date.now()}`;
  const client = () =>
    new InsforgeClient({ baseUrl: fake.url, apiKey: fake.apiKey }, { backoffMs: 20, retries: 2 });
  const options = () => ({ connect: async () => client(), writer: "laptop:/p", onTable: () => {} });
  const env = () => ({ INSFORGE_BASE_URL: fake.url, INSFORGE_API_KEY: fake.apiKey });

  beforeAll(async () => {
    fake = await startFakeInsforge();
    root = home.project(name);
    appendRecords(root, syntheticConversation(4, 5));
    await indexProject(root, { llm: null });
    const store = new SqliteMemoryStore(storePath(root), { readonly: true });
    original = await store.snapshot();
    store.close();
    originalHash = fileHash(storePath(root));
  }, 120_000);
  afterAll(async () => {
    await fake?.close();
  });

  test("a server killed half-way through the copy switches nothing and changes no source byte; the next run resumes and verifies", async () => {
    const from = storageTarget("local", readProjectConfig(root), root);
    const to = storageTarget("insforge", readProjectConfig(root), root, env());
    let inserts = 0;
    fake.dropNext({ ran: false, when: (q) => /^\s*INSERT/i.test(q) && ++inserts > 3 });
    const error = await failure(() => migrateStore(root, storePath(root), from, to, options()));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).not.toContain(fake.apiKey);
    expect(readProjectConfig(root).storage).toBe("local");
    expect(fileHash(storePath(root))).toBe(originalHash);

    fake.restart();
    const copied: string[] = [];
    const report = await migrateStore(root, storePath(root), from, to, {
      ...options(),
      onTable: (table, _rows, now) => {
        if (now) copied.push(table);
      },
    });
    // The tables the first run finished are verified, not copied again.
    expect(copied).not.toContain("chunks");
    expect(copied.length).toBeGreaterThan(0);
    expect(report.tables.find((t) => t.name === "chunks")?.rows).toBe(original.chunks.length);
    const config = readProjectConfig(root) as unknown as { storage: string; insforge: { project: string } };
    expect(config.storage).toBe("insforge");
    expect(config.insforge.project).toBe(name);
    expect(JSON.stringify(config)).not.toContain(fake.apiKey);
    expect(fileHash(storePath(root))).toBe(originalHash);

    const store = await InsforgeMemoryStore.open(client(), { project: name, writer: "laptop:/p" });
    expect(await store.snapshot()).toEqual(original);
    expect((await store.state()).offset).toBeGreaterThan(0);
    await store.closeAsync();
  }, 120_000);

  test("back to local: the copy replaces the store and equals the original; the next index adds nothing", async () => {
    const from = storageTarget("insforge", readProjectConfig(root), root, env());
    await migrateStore(root, storePath(root), from, { kind: "local" }, options());
    expect(readProjectConfig(root).storage).toBe("local");
    expect(fileHash(`${storePath(root)}.before-migrate`)).toBe(originalHash);
    const store = new SqliteMemoryStore(storePath(root));
    const { generation: _g, ...snapshot } = await store.snapshot();
    const { generation: _o, ...expected } = original;
    expect(snapshot).toEqual(expected);
    store.close();
    const again = await indexProject(root, { llm: null });
    expect(again.chunks).toBe(0);
  }, 120_000);
});
