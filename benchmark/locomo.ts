#!/usr/bin/env bun
/**
 * LoCoMo evidence recall, no LLM: every conversation is captured as sessions (speaker A = user,
 * B = assistant, one session per LoCoMo session with its date), indexed by the real indexer, and every
 * question of categories 1–4 is asked in every mode. Baseline in the same run: plain BM25 over single
 * turns (the same tokens), which ../shared/eval/README.md measured at 54.5 / 22.7 recall@10.
 *
 * Fair turn mapping: our hits are chunks (a user turn + the reply), the evidence is turns. A ranked
 * chunk list becomes a ranked TURN list — each chunk's turns in the order of their own BM25 score for
 * the question (ties keep conversation order) — and recall@k counts the first k TURNS, so a mode never
 * sees more than k turns, exactly like the single-turn baseline.
 *
 * Usage: bun benchmark/locomo.ts [--json]
 */
import { join } from "node:path";
import { projectDataDir } from "../src/cli/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { Bm25Index } from "../src/memory/recall/bm25.ts";
import {
  closeWarmIndexes,
  loadMemoryIndex,
  MODES,
  type Mode,
  rankChunks,
} from "../src/memory/recall/index.ts";
import { topIndices } from "../src/memory/recall/memory-index.ts";
import { loadLocomo, locomoRecords, scratchHome, writeChatLog } from "./memory-data.ts";

const KS = [5, 10] as const;
const CATEGORIES = [1, 2, 3, 4] as const;
const CATEGORY_NAMES: Record<number, string> = {
  1: "multi-hop",
  2: "temporal",
  3: "open-domain",
  4: "single-hop",
};
/** Chunks fetched per question: enough to fill 10 turns even when chunks hold one turn. */
const CHUNK_DEPTH = 10;

type Tally = Map<string, { sum: number; n: number }>;

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

export async function runLocomo(): Promise<{ rows: Record<string, number | string>[]; questions: number }> {
  const samples = await loadLocomo();
  const scratch = scratchHome("locomo");
  const tally: Tally = new Map();
  const systems = ["bm25-turns (baseline)", ...MODES];
  let questions = 0;
  try {
    for (const sample of samples) {
      const records = locomoRecords(sample);
      const root = scratch.project(sample.sample_id);
      writeChatLog(join(projectDataDir(root), "chats.jsonl"), records);
      await indexProject(root, { llm: null });
      const index = (await loadMemoryIndex(root))!;
      // The baseline index and the within-chunk turn order both use BM25 over single turns.
      const turnIds = records.map((r) => r.uuid);
      const turnBm25 = Bm25Index.fromTexts(records.map((r) => r.text));
      const turnIndex = new Map(turnIds.map((id, i) => [id, i]));
      for (const qa of sample.qa) {
        if (!CATEGORIES.includes(qa.category as 1)) continue;
        const evidence = new Set(
          qa.evidence
            .flatMap((e) => e.split(/[;,]\s*/))
            .map((e) => e.trim())
            .filter(Boolean)
            .map((e) => `${sample.sample_id}/${e}`),
        );
        if (evidence.size === 0) continue;
        questions++;
        const turnScores = turnBm25.scores(qa.question);
        const ranked: Record<string, string[]> = {
          "bm25-turns (baseline)": topIndices(turnScores, 10)
            .filter((i) => turnScores[i] > 0)
            .map((i) => turnIds[i]),
        };
        for (const mode of MODES) {
          const hits = await rankChunks(index, qa.question, mode as Mode, CHUNK_DEPTH);
          ranked[mode] = hits.flatMap(({ chunk }) =>
            index.chunks[chunk].turns
              .map((t, order) => ({ id: t.uuid, order, score: turnScores[turnIndex.get(t.uuid) ?? -1] ?? 0 }))
              .sort((a, b) => b.score - a.score || a.order - b.order)
              .map((t) => t.id),
          );
        }
        for (const system of systems) {
          for (const k of KS) {
            const r = recallAt(ranked[system], evidence, k);
            add(tally, `${system}|${k}|all`, r);
            add(tally, `${system}|${k}|${qa.category}`, r);
          }
        }
      }
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
    return row;
  });
  return { rows, questions };
}

if (import.meta.main) {
  const started = performance.now();
  const { rows, questions } = await runLocomo();
  if (process.argv.includes("--json")) console.log(JSON.stringify({ questions, rows }, null, 2));
  else {
    console.log(
      `LoCoMo evidence recall (%), ${questions} questions of categories 1-4, no LLM, turn-level k:`,
    );
    console.table(rows);
    const baseline = rows[0];
    for (const row of rows.slice(1)) {
      console.log(
        `${String(row.system).padEnd(8)} recall@10 ${row["all@10"]} (${((Number(row["all@10"]) / Number(baseline["all@10"])) * 100).toFixed(0)}% of baseline), multi-hop@10 ${row["multi-hop@10"]} (baseline ${baseline["multi-hop@10"]})`,
      );
    }
    console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
}
