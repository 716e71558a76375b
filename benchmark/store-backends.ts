/**
 * The memory store's backends on LoCoMo, in one run: all ten conversations indexed into one local
 * project, then the same batches written to a fresh SQLite file (the baseline), to Postgres on PGlite and
 * to the Postgres server of TRIFORGE_TEST_PG_URL (or TRIFORGE_PG_URL) when set. Reported per backend:
 * writeBatch time for the whole store (the store's share of indexing; embedding and graph building are
 * the same for every backend), `triforge migrate`'s copy and verification, snapshot load, warm query
 * time per mode, and evidence recall@10 of each mode — which must be identical, since recall runs on the
 * same snapshot.
 *
 *   bun benchmark/store-backends.ts
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { loadModel } from "../src/embed/source.ts";
import { projectDataDir, storePath } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { MODES, type Mode, rankChunks } from "../src/memory/recall/recall.ts";
import { MemoryIndex } from "../src/memory/recall/snapshot.ts";
import { migrateStore } from "../src/store/migrate.ts";
import { connectPostgres, type SqlClient } from "../src/store/pg-client.ts";
import { PgMemoryStore } from "../src/store/postgres.ts";
import type { ChunkRow } from "../src/store/remote.ts";
import { factKey, SqliteMemoryStore } from "../src/store/sqlite.ts";
import type { IndexBatch, MemoryStore } from "../src/store/types.ts";
import { pgliteClient } from "../test/support/pglite.ts";
import { loadLocomo, locomoRecords, percentiles, scratchHome, writeChatLog } from "./memory-data.ts";

const BATCH = 256;

/** The batches that rebuild a store as the indexer wrote it: chunks in id order with their graphs and vectors. */
export function batchesOf(path: string): IndexBatch[] {
  const db = new Database(path, { readonly: true });
  const f32 = (blob: Uint8Array) => new Float32Array(new Uint8Array(blob).buffer);
  const chunks = db
    .query("SELECT id, hash, session_id, ts, text, graph_source, model, vector FROM chunks ORDER BY id")
    .all() as ChunkRow[];
  const turns = db
    .query('SELECT uuid, chunk_id, role, ts, start, "end" FROM turns ORDER BY chunk_id, ord')
    .all() as {
    uuid: string;
    chunk_id: number;
    role: "user" | "assistant";
    ts: string;
    start: number;
    end: number;
  }[];
  const entities = new Map(
    (
      db.query("SELECT id, phrase, label, vector FROM entities").all() as {
        id: number;
        phrase: string;
        label: string;
        vector: Uint8Array;
      }[]
    ).map((e) => [e.id, e]),
  );
  const context = db.query("SELECT a, b FROM edges WHERE kind = 1 ORDER BY b").all() as {
    a: number;
    b: number;
  }[];
  const facts = db
    .query(
      "SELECT s.chunk_id AS chunk, f.subject, f.predicate, f.object, f.vector FROM fact_sources s JOIN facts f ON f.id = s.fact_id ORDER BY f.id",
    )
    .all() as { chunk: number; subject: number; predicate: string; object: number; vector: Uint8Array }[];
  const synonyms = db.query("SELECT a, b, weight FROM edges WHERE kind = 2 ORDER BY id").all() as {
    a: number;
    b: number;
    weight: number;
  }[];
  db.close();
  const byChunk = <T>(rows: T[], key: (r: T) => number) => {
    const map = new Map<number, T[]>();
    for (const r of rows) {
      let list = map.get(key(r));
      if (!list) map.set(key(r), (list = []));
      list.push(r);
    }
    return map;
  };
  const turnsOf = byChunk(turns, (t) => t.chunk_id);
  const phrasesOf = byChunk(context, (c) => c.a);
  const factsOf = byChunk(facts, (f) => f.chunk);
  const out: IndexBatch[] = [];
  const seenPhrases = new Set<number>();
  const seenFacts = new Set<string>();
  const pending = [...synonyms];
  for (let i = 0; i < chunks.length; i += BATCH) {
    const batch: IndexBatch = {
      model: chunks[i].model,
      chunks: [],
      entityVectors: new Map(),
      factVectors: new Map(),
      synonyms: [],
      summaries: [],
    };
    for (const c of chunks.slice(i, i + BATCH)) {
      const phrases = (phrasesOf.get(c.id) ?? []).map((p) => entities.get(p.b)!);
      for (const e of phrases)
        if (!seenPhrases.has(e.id)) {
          seenPhrases.add(e.id);
          batch.entityVectors.set(e.phrase, f32(e.vector));
        }
      const graphFacts = (factsOf.get(c.id) ?? []).map((f) => {
        const triple = {
          subject: entities.get(f.subject)!.phrase,
          predicate: f.predicate,
          object: entities.get(f.object)!.phrase,
        };
        const key = factKey(triple.subject, triple.predicate, triple.object);
        if (!seenFacts.has(key)) {
          seenFacts.add(key);
          batch.factVectors.set(key, f32(f.vector));
        }
        return triple;
      });
      batch.chunks.push({
        hash: c.hash,
        sessionId: c.session_id,
        ts: c.ts,
        text: c.text,
        turns: (turnsOf.get(c.id) ?? []).map(({ uuid, role, ts, start, end }) => ({
          uuid,
          role,
          ts,
          start,
          end,
        })),
        vector: f32(c.vector),
        graph: { entities: phrases.map((e) => ({ phrase: e.phrase, label: e.label })), facts: graphFacts },
        graphSource: c.graph_source,
      });
    }
    for (let s = pending.length - 1; s >= 0; s--)
      if (seenPhrases.has(pending[s].a) && seenPhrases.has(pending[s].b)) {
        const [syn] = pending.splice(s, 1);
        batch.synonyms.unshift({
          a: entities.get(syn.a)!.phrase,
          b: entities.get(syn.b)!.phrase,
          score: syn.weight,
        });
      }
    out.push(batch);
  }
  return out;
}

const ms = (t: number) => Number(t.toFixed(1));

/** LoCoMo's answerable questions (categories 1-4), each with the records its answer is in. */
export function recallQuestions(samples: Awaited<ReturnType<typeof loadLocomo>>) {
  return samples.flatMap((s) =>
    s.qa
      .filter((qa) => [1, 2, 3, 4].includes(qa.category))
      .map((qa) => ({
        question: qa.question,
        evidence: new Set(
          qa.evidence.flatMap((e) => e.split(/[;,]\s*/)).map((e) => `${s.sample_id}/${e.trim()}`),
        ),
      })),
  );
}

async function main(): Promise<void> {
  // STORE_BENCH_CONVERSATIONS=1 for a quick look; the figures are for all ten.
  const samples = (await loadLocomo()).slice(0, Number(process.env.STORE_BENCH_CONVERSATIONS ?? 10));
  const scratch = scratchHome("store-backends");
  try {
    const root = scratch.project("locomo");
    const records = samples.flatMap((s) => locomoRecords(s));
    writeChatLog(join(projectDataDir(root), "chats.jsonl"), records);
    let started = performance.now();
    await indexProject(root, { llm: null });
    const localIndexMs = performance.now() - started;
    const batches = batchesOf(storePath(root));
    const model = await loadModel();
    const questions = recallQuestions(samples);
    const backends: { name: string; open: () => Promise<{ store: MemoryStore; client?: SqlClient }> }[] = [
      {
        name: "sqlite (baseline)",
        open: async () => ({ store: new SqliteMemoryStore(join(scratch.home, `replay-${Date.now()}.db`)) }),
      },
      {
        name: "postgres on PGlite",
        open: async () => {
          const client = await pgliteClient();
          return { store: await PgMemoryStore.open(client, { project: "bench", writer: "bench" }), client };
        },
      },
    ];
    const serverUrl = process.env.TRIFORGE_TEST_PG_URL ?? process.env.TRIFORGE_PG_URL;
    if (serverUrl)
      backends.push({
        name: "postgres server",
        open: async () => {
          const client = await connectPostgres(serverUrl);
          const project = `bench_${Date.now()}`;
          return { store: await PgMemoryStore.open(client, { project, writer: "bench" }), client };
        },
      });
    else console.log("(no TRIFORGE_TEST_PG_URL: the Postgres server is left out)");
    const rows: Record<string, string | number>[] = [];
    let reference: string | undefined;
    for (const backend of backends) {
      const { store, client } = await backend.open();
      started = performance.now();
      for (const batch of batches) await store.writeBatch(batch);
      const writeMs = performance.now() - started;
      started = performance.now();
      const snapshot = await store.snapshot();
      const snapshotMs = performance.now() - started;
      const index = await MemoryIndex.build(snapshot, model);
      const row: Record<string, string | number> = {
        backend: backend.name,
        "writeBatch all (ms)": ms(writeMs),
        "snapshot (ms)": ms(snapshotMs),
      };
      const rankings: string[] = [];
      for (const mode of MODES) {
        const times: number[] = [];
        let recall = 0;
        for (const q of questions) {
          const t = performance.now();
          const hits = await rankChunks(index, q.question, mode as Mode, 10);
          times.push(performance.now() - t);
          const turns = new Set(hits.flatMap((h) => index.chunks[h.chunk].turns.map((x) => x.uuid)));
          recall += [...q.evidence].filter((e) => turns.has(e)).length / (q.evidence.size || 1);
          rankings.push(hits.map((h) => h.chunk).join(","));
        }
        row[`${mode} p50 (ms)`] = ms(percentiles(times).p50);
        row[`${mode} R@10 chunks`] = Number(((100 * recall) / questions.length).toFixed(1));
      }
      if (client && store instanceof PgMemoryStore) {
        // Postgres's own full-text ranking over the same chunks, for the lexical choice: ts_rank_cd over an
        // English tsvector (GIN-indexed), the question's lexemes OR-ed (an AND query matches almost nothing).
        const s = store.schema;
        await client.query(`ALTER TABLE ${s}.chunks ADD COLUMN IF NOT EXISTS tsv tsvector`);
        await client.query(`UPDATE ${s}.chunks SET tsv = to_tsvector('english', text)`);
        await client.query(`CREATE INDEX IF NOT EXISTS chunks_tsv ON ${s}.chunks USING gin(tsv)`);
        const position = new Map(snapshot.chunks.map((c, i) => [c.id, i]));
        const times: number[] = [];
        let recall = 0;
        for (const q of questions) {
          const t = performance.now();
          const hits = await client.query<{ id: number }>(
            `WITH q AS (SELECT to_tsquery('english', coalesce(string_agg(quote_literal(l), ' | '), '')) AS q
                        FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS l)
             SELECT id FROM ${s}.chunks, q WHERE tsv @@ q.q ORDER BY ts_rank_cd(tsv, q.q) DESC, id LIMIT 10`,
            [q.question],
          );
          times.push(performance.now() - t);
          const turns = new Set(
            hits.flatMap((h) => index.chunks[position.get(Number(h.id)) as number].turns.map((x) => x.uuid)),
          );
          recall += [...q.evidence].filter((e) => turns.has(e)).length / (q.evidence.size || 1);
        }
        row["postgres FTS p50 (ms)"] = ms(percentiles(times).p50);
        row["postgres FTS R@10 chunks"] = Number(((100 * recall) / questions.length).toFixed(1));
      }
      const signature = Bun.hash(rankings.join("|")).toString(16);
      reference ??= signature;
      row["rankings = baseline"] = signature === reference ? "yes" : "NO";
      if (store instanceof PgMemoryStore) await store.closeAsync();
      else store.close();
      rows.push(row);
      console.log(JSON.stringify(row));
    }
    console.log(
      `LoCoMo, all ${samples.length} conversations in one project: ${batches.reduce((n, b) => n + b.chunks.length, 0)} chunks, ${questions.length} questions; local index (whole indexer) ${ms(localIndexMs)} ms`,
    );
    console.table(rows);
    // triforge migrate's copy and verification, local → PGlite (and the server).
    const targets: { name: string; client: () => Promise<SqlClient> }[] = [
      { name: "PGlite", client: () => pgliteClient() },
    ];
    if (serverUrl) targets.push({ name: "server", client: () => connectPostgres(serverUrl) });
    const migrations: Record<string, number | string>[] = [];
    for (const target of targets) {
      const client = await target.client();
      started = performance.now();
      const report = await migrateStore(
        root,
        storePath(root),
        { kind: "local" },
        { kind: "postgres", url: "bench", project: `copy_${Date.now()}` },
        {
          connect: async () => client,
          writer: "bench",
        },
      );
      migrations.push({
        target: target.name,
        rows: report.tables.reduce((n, t) => n + t.rows, 0),
        "copy + verify (ms)": ms(performance.now() - started),
      });
      // Put the config back for the next copy.
      await Bun.write(
        join(root, ".triforge", "config.json"),
        JSON.stringify({ storage: "local", llm: "none", exclude: [] }),
      );
    }
    console.table(migrations);
  } finally {
    scratch.cleanup();
  }
}

if (import.meta.main) await main();
