/**
 * The InsForge store on LoCoMo, in one run against its baselines: all ten conversations indexed into one
 * local project, then the same 256-chunk batches written to a fresh SQLite file (the baseline), to the
 * Postgres store on PGlite, and to the InsForge store through the InsForge contract server (HTTP on
 * 127.0.0.1, the same PGlite behind it), so the InsForge figures are the REST path's cost over the same
 * database engine. Reported per backend: writeBatch for the whole store, a whole pull (snapshot), bytes
 * sent, and whether recall ranks every question the same as on SQLite (hybrid mode, 1,540 questions);
 * then `triforge migrate`'s copy and verification to PGlite and to InsForge.
 *
 *   bun benchmark/store-insforge.ts          (STORE_BENCH_CONVERSATIONS=1 for a quick look)
 */
import { join } from "node:path";
import { loadModel } from "../src/embed/source.ts";
import { projectDataDir, storePath } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { rankChunks } from "../src/memory/recall/recall.ts";
import { MemoryIndex } from "../src/memory/recall/snapshot.ts";
import { InsforgeClient } from "../src/store/insforge-client.ts";
import { InsforgeMemoryStore } from "../src/store/insforge.ts";
import { migrateStore } from "../src/store/migrate.ts";
import type { SqlClient } from "../src/store/pg-client.ts";
import { PgMemoryStore } from "../src/store/postgres.ts";
import { SqliteMemoryStore } from "../src/store/sqlite.ts";
import type { MemoryStore } from "../src/store/types.ts";
import { startFakeInsforge } from "../test/support/fakes/insforge.ts";
import { pgliteClient } from "../test/support/pglite.ts";
import { loadLocomo, locomoRecords, scratchHome, writeChatLog } from "./memory-data.ts";
import { batchesOf } from "./store-backends.ts";

const ms = (t: number) => Number(t.toFixed(0));

async function main(): Promise<void> {
  const samples = (await loadLocomo()).slice(0, Number(process.env.STORE_BENCH_CONVERSATIONS ?? 10));
  const scratch = scratchHome("store-insforge");
  const fake = await startFakeInsforge();
  try {
    const root = scratch.project("locomo");
    writeChatLog(
      join(projectDataDir(root), "chats.jsonl"),
      samples.flatMap((s) => locomoRecords(s)),
    );
    await indexProject(root, { llm: null });
    const batches = batchesOf(storePath(root));
    const model = await loadModel();
    const questions = samples.flatMap((s) =>
      s.qa.filter((qa) => [1, 2, 3, 4].includes(qa.category)).map((qa) => qa.question),
    );
    const insforge = () => new InsforgeClient({ baseUrl: fake.url, apiKey: fake.apiKey });
    const bytesSent = () =>
      fake.calls.reduce((n, c) => n + c.query.length + JSON.stringify(c.params ?? []).length, 0);
    const backends: { name: string; open: () => Promise<MemoryStore> }[] = [
      { name: "sqlite (baseline)", open: async () => new SqliteMemoryStore(join(scratch.home, "replay.db")) },
      {
        name: "postgres on PGlite",
        open: async () => PgMemoryStore.open(await pgliteClient(), { project: "bench", writer: "bench" }),
      },
      {
        name: "insforge (contract server on PGlite)",
        open: async () => InsforgeMemoryStore.open(insforge(), { project: "bench", writer: "bench" }),
      },
    ];
    const rows: Record<string, string | number>[] = [];
    let baseline: { write: number; snapshot: number; rankings: string } | undefined;
    for (const backend of backends) {
      const store = await backend.open();
      const sent = bytesSent();
      const reloads = fake.schemaReloads;
      let started = performance.now();
      for (const batch of batches) await store.writeBatch(batch);
      const write = performance.now() - started;
      const requestBytes = bytesSent() - sent;
      started = performance.now();
      const snapshot = await store.snapshot();
      const snapshotMs = performance.now() - started;
      const index = await MemoryIndex.build(snapshot, model);
      const rankings: string[] = [];
      for (const q of questions)
        rankings.push((await rankChunks(index, q, "hybrid", 10)).map((h) => h.chunk).join(","));
      const signature = Bun.hash(rankings.join("|")).toString(16);
      baseline ??= { write, snapshot: snapshotMs, rankings: signature };
      rows.push({
        backend: backend.name,
        "writeBatch all (ms)": ms(write),
        "× sqlite": Number((write / baseline.write).toFixed(2)),
        "whole pull (ms)": ms(snapshotMs),
        "pull × sqlite": Number((snapshotMs / baseline.snapshot).toFixed(2)),
        "request MB": backend.name.startsWith("insforge") ? Number((requestBytes / 1e6).toFixed(1)) : "-",
        // Writes InsForge would follow with a PostgREST schema reload (a DDL word anywhere in the query).
        "schema reloads": backend.name.startsWith("insforge") ? fake.schemaReloads - reloads : "-",
        "rankings = sqlite": signature === baseline.rankings ? "yes" : "NO",
      });
      console.log(JSON.stringify(rows.at(-1)));
      if ("closeAsync" in store) await (store as PgMemoryStore).closeAsync();
      else store.close();
    }
    console.log(
      `LoCoMo, ${samples.length} conversations in one project: ${batches.reduce((n, b) => n + b.chunks.length, 0)} chunks in ${batches.length} batches, ${questions.length} questions`,
    );
    console.table(rows);
    const targets: { name: string; to: "postgres" | "insforge"; client: () => Promise<SqlClient> }[] = [
      { name: "postgres on PGlite", to: "postgres", client: () => pgliteClient() },
      { name: "insforge (contract server)", to: "insforge", client: async () => insforge() },
    ];
    const copies: Record<string, string | number>[] = [];
    for (const target of targets) {
      const client = await target.client();
      const started = performance.now();
      const to =
        target.to === "postgres"
          ? { kind: "postgres" as const, url: "bench", project: `copy_${Date.now()}` }
          : {
              kind: "insforge" as const,
              baseUrl: fake.url,
              apiKey: fake.apiKey,
              project: `copy_${Date.now()}`,
            };
      const report = await migrateStore(root, storePath(root), { kind: "local" }, to, {
        connect: async () => client,
        writer: "bench",
      });
      copies.push({
        target: target.name,
        rows: report.tables.reduce((n, t) => n + t.rows, 0),
        "copy + verify (ms)": ms(performance.now() - started),
      });
      await Bun.write(
        join(root, ".triforge", "config.json"),
        JSON.stringify({ storage: "local", llm: "none" }),
      );
    }
    console.table(copies);
  } finally {
    await fake.close();
    scratch.cleanup();
  }
}

if (import.meta.main) await main();
