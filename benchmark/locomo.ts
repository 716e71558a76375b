#!/usr/bin/env bun
/**
 * LoCoMo evidence recall, no LLM: every conversation is captured as sessions (speaker A = user,
 * B = assistant, one session per LoCoMo session with its date), indexed by the real indexer, and every
 * question of categories 1–4 is asked in every mode. Baseline in the same run: plain BM25 over single
 * turns (the same tokens), which ../shared/eval/README.md measured at 54.5 / 22.7 recall@10.
 *
 * Fair turn mapping: our hits are chunks (a user turn + the reply) or, for a question naming one
 * speaker, that speaker's turns of a chunk (speaker linking, src/memory/recall/speakers.ts); the evidence
 * is turns. A ranked hit list becomes a ranked TURN list — each hit's turns in the order of their own
 * BM25 score for the question (ties keep conversation order) — and recall@k counts the first k TURNS, so
 * a mode never sees more than k turns, exactly like the single-turn baseline. The FTS5 row ranks whole
 * chunks (it compares lexical engines, without speaker linking).
 *
 * Each row also reports recall@10 on the tuning half (conversations 0–4) and the held-out half (5–9).
 *
 * Usage: bun benchmark/locomo.ts [--json]
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { projectDataDir } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { Bm25Index } from "../src/memory/recall/bm25.ts";
import {
  closeWarmIndexes,
  loadMemoryIndex,
  MODES,
  type Mode,
  rankChunks,
} from "../src/memory/recall/recall.ts";
import { type MemoryIndex, type Ranked, topIndices } from "../src/memory/recall/snapshot.ts";
import { lexicalTokens } from "../src/memory/tokens.ts";
import { evidenceTurnIds, loadLocomo, locomoRecords, scratchHome, writeChatLog } from "./memory-data.ts";

const KS = [5, 10] as const;
const CATEGORIES = [1, 2, 3, 4] as const;
const CATEGORY_NAMES: Record<number, string> = {
  1: "multi-hop",
  2: "temporal",
  3: "open-domain",
  4: "single-hop",
};
/**
 * Ranking constants are tuned on conversations 0–4 only; 5–9 are reported apart as held-out, so
 * overfitting shows as a gap between the two halves.
 */
const TUNING_CONVERSATIONS = 5;
/** Chunks fetched per question: enough to fill 10 turns even when chunks hold one turn. */
const CHUNK_DEPTH = 10;

type Tally = Map<string, { sum: number; n: number }>;

/**
 * The FTS5 alternative to our in-memory BM25, measured in the same run (docs/store.md says why we keep
 * ours): the same identifier-aware tokens, pre-tokenised into an FTS5 table whose tokenizer keeps them
 * whole, ranked by FTS5's bm25().
 */
class Fts5Lexical {
  private readonly db = new Database(":memory:");
  readonly buildMs: number;
  constructor(index: MemoryIndex) {
    const started = performance.now();
    this.db.run(`CREATE VIRTUAL TABLE f USING fts5(t, tokenize = "unicode61 tokenchars '._/-:@+#'")`);
    const insert = this.db.prepare("INSERT INTO f(rowid, t) VALUES (?, ?)");
    this.db.transaction(() => {
      index.chunks.forEach((c, i) => {
        insert.run(i, lexicalTokens(c.text).join(" "));
      });
    })();
    this.buildMs = performance.now() - started;
  }
  rank(query: string, k: number): number[] {
    const terms = [...new Set(lexicalTokens(query))].map((t) => `"${t.replaceAll('"', '""')}"`);
    if (!terms.length) return [];
    return (
      this.db
        .query("SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank LIMIT ?")
        .all(terms.join(" OR "), k) as { rowid: number }[]
    ).map((r) => r.rowid);
  }
  close(): void {
    this.db.close();
  }
}

function add(tally: Tally, key: string, value: number): void {
  const t = tally.get(key) ?? { sum: 0, n: 0 };
  t.sum += value;
  t.n++;
  tally.set(key, t);
}

function recallAt(ranked: string[], evidence: Set<string>, k: number): number {
  let found = 0;
  for (const id of ranked.slice(0, k)) if (evidence.has(id)) found++;
  return found / evidence.size;
}

export async function runLocomo(): Promise<{
  rows: Record<string, number | string>[];
  questions: number;
  lexical: { ownBm25QueryMs: number; fts5QueryMs: number; fts5BuildMs: number };
}> {
  const samples = await loadLocomo();
  const scratch = scratchHome("locomo");
  const tally: Tally = new Map();
  const systems = ["bm25-turns (baseline)", ...MODES, "bm25 via FTS5"];
  const lexicalMs = { own: 0, fts5: 0, fts5Build: 0, queries: 0 };
  let questions = 0;
  try {
    for (const [conversation, sample] of samples.entries()) {
      const half = conversation < TUNING_CONVERSATIONS ? "tune" : "held-out";
      const records = locomoRecords(sample);
      const root = scratch.project(sample.sample_id);
      writeChatLog(join(projectDataDir(root), "chats.jsonl"), records);
      await indexProject(root, { llm: null });
      const index = (await loadMemoryIndex(root))!;
      const fts5 = new Fts5Lexical(index);
      lexicalMs.fts5Build += fts5.buildMs;
      // The baseline index and the within-chunk turn order both use BM25 over single turns.
      const turnIds = records.map((r) => r.uuid);
      const turnBm25 = Bm25Index.fromTexts(records.map((r) => r.text));
      const turnIndex = new Map(turnIds.map((id, i) => [id, i]));
      for (const qa of sample.qa) {
        if (!CATEGORIES.includes(qa.category as 1)) continue;
        const evidence = evidenceTurnIds(sample, qa);
        if (evidence.size === 0) continue;
        questions++;
        const turnScores = turnBm25.scores(qa.question);
        const ranked: Record<string, string[]> = {
          "bm25-turns (baseline)": topIndices(turnScores, 10)
            .filter((i) => turnScores[i] > 0)
            .map((i) => turnIds[i]),
        };
        const toTurns = (hits: Ranked[]) =>
          hits.flatMap(({ chunk, turns }) =>
            index.chunks[chunk].turns
              .filter((_, i) => !turns || turns.includes(i))
              .map((t, order) => ({ id: t.uuid, order, score: turnScores[turnIndex.get(t.uuid) ?? -1] ?? 0 }))
              .sort((a, b) => b.score - a.score || a.order - b.order)
              .map((t) => t.id),
          );
        for (const mode of MODES) {
          const started = performance.now();
          const hits = await rankChunks(index, qa.question, mode as Mode, CHUNK_DEPTH);
          if (mode === "bm25") lexicalMs.own += performance.now() - started;
          ranked[mode] = toTurns(hits);
        }
        const started = performance.now();
        ranked["bm25 via FTS5"] = toTurns(
          fts5.rank(qa.question, CHUNK_DEPTH).map((chunk) => ({ chunk, score: 0 })),
        );
        lexicalMs.fts5 += performance.now() - started;
        lexicalMs.queries++;
        for (const system of systems) {
          for (const k of KS) {
            const r = recallAt(ranked[system], evidence, k);
            add(tally, `${system}|${k}|all`, r);
            add(tally, `${system}|${k}|${qa.category}`, r);
            add(tally, `${system}|${k}|${half}`, r);
            if (qa.category === 1) add(tally, `${system}|${k}|${half}-1`, r);
          }
        }
      }
      fts5.close();
    }
  } finally {
    closeWarmIndexes();
    scratch.cleanup();
  }
  const pct = (key: string) =>
    Number(((100 * (tally.get(key)?.sum ?? 0)) / (tally.get(key)?.n || 1)).toFixed(1));
  const rows = systems.map((system) => {
    const row: Record<string, number | string> = { system };
    for (const k of KS) {
      row[`all@${k}`] = pct(`${system}|${k}|all`);
      for (const c of CATEGORIES) row[`${CATEGORY_NAMES[c]}@${k}`] = pct(`${system}|${k}|${c}`);
    }
    for (const half of ["tune", "held-out"]) {
      row[`${half}@10`] = pct(`${system}|10|${half}`);
      row[`${half} multi-hop@10`] = pct(`${system}|10|${half}-1`);
    }
    return row;
  });
  const lexical = {
    ownBm25QueryMs: Number((lexicalMs.own / lexicalMs.queries).toFixed(3)),
    fts5QueryMs: Number((lexicalMs.fts5 / lexicalMs.queries).toFixed(3)),
    fts5BuildMs: Math.round(lexicalMs.fts5Build),
  };
  return { rows, questions, lexical };
}

if (import.meta.main) {
  const started = performance.now();
  const { rows, questions, lexical } = await runLocomo();
  if (process.argv.includes("--json")) console.log(JSON.stringify({ questions, rows, lexical }, null, 2));
  else {
    console.log(
      `LoCoMo evidence recall (%), ${questions} questions of categories 1-4, no LLM, turn-level k:`,
    );
    console.table(
      rows.map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !k.includes("@5")))),
    );
    const baseline = rows[0];
    for (const row of rows.slice(1)) {
      console.log(
        `${String(row.system).padEnd(8)} recall@10 ${row["all@10"]} (${((Number(row["all@10"]) / Number(baseline["all@10"])) * 100).toFixed(0)}% of baseline), multi-hop@10 ${row["multi-hop@10"]} (baseline ${baseline["multi-hop@10"]})`,
      );
    }
    console.log(
      `lexical index: own BM25 ${lexical.ownBm25QueryMs} ms/query (warm, in memory) vs FTS5 ${lexical.fts5QueryMs} ms/query (+${lexical.fts5BuildMs} ms to build its tables)`,
    );
    console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
}
