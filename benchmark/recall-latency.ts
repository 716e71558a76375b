#!/usr/bin/env bun
/**
 * Warm recall latency per mode on the indexed LoCoMo store (all 10 conversations in one project, the
 * biggest store we have), through the public recall() — as the MCP server calls it — next to BM25
 * alone in the same run. Goal: hybrid p50 ≤ 20 ms.
 *
 * Usage: bun benchmark/recall-latency.ts [--json]
 */
import { join } from "node:path";
import { projectDataDir } from "../src/cli/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { closeWarmIndexes, MODES, recall } from "../src/memory/recall/index.ts";
import { loadLocomo, locomoRecords, percentiles, scratchHome, writeChatLog } from "./memory-data.ts";

const QUESTIONS = 300;
const WARMUP = 20;

async function main() {
  const scratch = scratchHome("latency");
  const rows: Record<string, number | string>[] = [];
  let chunks = 0;
  try {
    const samples = await loadLocomo();
    const root = scratch.project("locomo");
    writeChatLog(join(projectDataDir(root), "chats.jsonl"), samples.flatMap(locomoRecords));
    chunks = (await indexProject(root, { llm: null })).chunks;
    const questions = samples
      .flatMap((s) => s.qa.map((q) => q.question))
      .filter((_, i) => i % 3 === 0)
      .slice(0, QUESTIONS);
    // The first call loads the model and builds the warm index; measured separately.
    const coldStart = performance.now();
    await recall(root, "warm up", { mode: "hybrid" });
    const coldMs = performance.now() - coldStart;
    const p50 = new Map<string, number>();
    for (const mode of MODES) {
      for (const q of questions.slice(0, WARMUP)) await recall(root, q, { mode });
      const times: number[] = [];
      for (const q of questions) {
        const t = performance.now();
        await recall(root, q, { mode, topK: 5 });
        times.push(performance.now() - t);
      }
      const { p50: median, p95 } = percentiles(times);
      p50.set(mode, median);
      rows.push({ mode, p50ms: Number(median.toFixed(2)), p95ms: Number(p95.toFixed(2)) });
    }
    const bm25 = p50.get("bm25") ?? 1;
    for (const row of rows) row.timesBm25 = Number((Number(row.p50ms) / bm25).toFixed(1));
    rows.push({
      mode: "first call (load + build)",
      p50ms: Number(coldMs.toFixed(1)),
      p95ms: Number.NaN,
      timesBm25: Number.NaN,
    });
  } finally {
    closeWarmIndexes();
    scratch.cleanup();
  }
  if (process.argv.includes("--json")) console.log(JSON.stringify({ chunks, rows }, null, 2));
  else {
    console.log(
      `Warm recall latency, LoCoMo in one store (${chunks} chunks), ${QUESTIONS} questions per mode:`,
    );
    console.table(rows);
  }
}

await main();
