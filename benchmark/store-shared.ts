/**
 * `storage: postgres` on LoCoMo against the local store, in one run: all ten conversations indexed by
 * the whole indexer into a project per backend — local (the baseline), shared in Postgres on PGlite, and
 * shared on the server of TRIFORGE_TEST_PG_URL (or TRIFORGE_PG_URL) when set. Reported per backend: the
 * index run (local index + push + pull of the mirror), its shared phase alone, a second run with nothing
 * new, recall through `recall()` (the path rag_search takes: the shared store's marks are checked first)
 * in a new process, cold (no warm index in this process) and warm (as the MCP server: a kept connection,
 * the marks asked at most once a second; PGlite, reached through a test connection, is asked every time),
 * and evidence recall@10 per mode, which must not change.
 *
 *   bun benchmark/store-shared.ts
 */
import { join } from "node:path";
import { projectDataDir } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { closeWarmIndexes, MODES, recall } from "../src/memory/recall/recall.ts";
import { keepSharedConnections, type SharedOptions } from "../src/memory/shared.ts";
import { connectPostgres } from "../src/store/pg-client.ts";
import { pgliteClient } from "../test/support/pglite.ts";
import { loadLocomo, locomoRecords, percentiles, scratchHome, writeChatLog } from "./memory-data.ts";
import { recallQuestions } from "./store-backends.ts";

const ms = (t: number) => Number(t.toFixed(1));

async function main(): Promise<void> {
  const samples = (await loadLocomo()).slice(0, Number(process.env.STORE_BENCH_CONVERSATIONS ?? 10));
  const records = samples.flatMap((s) => locomoRecords(s));
  const questions = recallQuestions(samples);
  const scratch = scratchHome("store-shared");
  const project = `bench_shared_${Date.now()}`;
  const serverUrl = process.env.TRIFORGE_TEST_PG_URL ?? process.env.TRIFORGE_PG_URL;
  const pglite = await pgliteClient();
  const backends: { name: string; config: object; shared?: SharedOptions }[] = [
    { name: "local (baseline)", config: { storage: "local", llm: "none" } },
    {
      name: "postgres on PGlite",
      // PGlite lives in this process: reached through `shared`; the URL is never dialled.
      config: {
        storage: "postgres",
        llm: "none",
        postgres: { project, url: "postgres://pglite@127.0.0.1:9/x" },
      },
      shared: { connect: async () => ({ ...pglite, close: async () => {} }) },
    },
  ];
  if (serverUrl)
    backends.push({
      name: "postgres server",
      config: { storage: "postgres", llm: "none", postgres: { project, url: serverUrl } },
    });
  else console.log("(no TRIFORGE_TEST_PG_URL: the Postgres server is left out)");
  // Warm recall as the MCP server does it: one kept connection checks the shared store's marks.
  keepSharedConnections();
  const rows: Record<string, string | number>[] = [];
  let reference: string | undefined;
  try {
    for (const backend of backends) {
      const root = scratch.project(backend.name.replace(/\W+/g, "-"));
      await Bun.write(join(root, ".triforge", "config.json"), JSON.stringify(backend.config));
      writeChatLog(join(projectDataDir(root), "chats.jsonl"), records);
      let started = performance.now();
      const run = await indexProject(root, { llm: null, shared: backend.shared });
      const indexMs = performance.now() - started;
      if (run.shared?.error) throw new Error(`${backend.name}: ${run.shared.error}`);
      started = performance.now();
      const again = await indexProject(root, { llm: null, shared: backend.shared });
      const againMs = performance.now() - started;
      const options = { topK: 10, shared: backend.shared };
      // Fresh: `triforge recall` in a new process (model load, store open, one connection, one query);
      // PGlite lives in this process only, so it has no such figure.
      const fresh: number[] = [];
      if (!backend.shared)
        for (const q of questions.slice(0, 5)) {
          const t = performance.now();
          const child = Bun.spawnSync(
            ["bun", "src/index.ts", "recall", q.question, "--project", root, "--json"],
            {
              env: { ...process.env },
            },
          );
          if (child.exitCode !== 0) throw new Error(`${backend.name}: recall failed: ${child.stderr}`);
          fresh.push(performance.now() - t);
        }
      // No warm index in this process: the store (or mirror) and its recall arrays opened again.
      const cold: number[] = [];
      for (const q of questions.slice(0, 5)) {
        closeWarmIndexes();
        const t = performance.now();
        await recall(root, q.question, options);
        cold.push(performance.now() - t);
      }
      const row: Record<string, string | number> = {
        backend: backend.name,
        "index run (ms)": ms(indexMs),
        "of which push+pull (ms)": ms(run.timings.shared ?? 0),
        "run, nothing new (ms)": ms(againMs),
        "new process recall p50 (ms)": fresh.length ? ms(percentiles(fresh).p50) : "n/a",
        "cold recall p50 (ms)": ms(percentiles(cold).p50),
      };
      const rankings: string[] = [];
      for (const mode of MODES) {
        const times: number[] = [];
        let found = 0;
        for (const q of questions) {
          const t = performance.now();
          const { hits } = await recall(root, q.question, { ...options, mode });
          times.push(performance.now() - t);
          const turns = new Set(hits.flatMap((h) => h.turns.map((x) => x.uuid)));
          found += [...q.evidence].filter((e) => turns.has(e)).length / (q.evidence.size || 1);
          rankings.push(hits.map((h) => `${h.session_id}:${h.score}`).join(","));
        }
        if (mode === "hybrid") row["warm hybrid p50 (ms)"] = ms(percentiles(times).p50);
        row[`${mode} R@10`] = Number(((100 * found) / questions.length).toFixed(1));
      }
      const signature = Bun.hash(rankings.join("|")).toString(16);
      reference ??= signature;
      row["rankings = baseline"] = signature === reference ? "yes" : "NO";
      rows.push(row);
      console.log(
        JSON.stringify({ ...row, pushed: run.shared?.push?.chunks, again: again.shared?.push?.chunks }),
      );
      closeWarmIndexes();
    }
    console.log(
      `LoCoMo, all ${samples.length} conversations in one project: ${records.length} turns, ${questions.length} questions × ${MODES.length} modes`,
    );
    console.table(rows);
  } finally {
    await pglite.close();
    if (serverUrl) {
      const admin = await connectPostgres(serverUrl);
      await admin.query(`DROP SCHEMA IF EXISTS "triforge_${project}" CASCADE`);
      await admin.close();
    }
    scratch.cleanup();
  }
}

if (import.meta.main) await main();
