#!/usr/bin/env bun
/**
 * Warm recall latency per mode on the indexed LoCoMo store (all 10 conversations in one project, the
 * biggest store we have), through the public recall() — as the MCP server calls it — next to BM25
 * alone in the same run. Goal: hybrid p50 ≤ 20 ms.
 *
 * Then the scale claim "dense: exact cosine is fine to 10^5 chunks": 10^5 synthetic unit vectors (the
 * default model's 64 dimensions, and 256 for the larger potion models) scored by the same dotAll + top-k
 * that dense mode runs, next to BM25 over 10^5 LoCoMo turns (the real turns repeated, so postings are
 * as long as or longer than a real 10^5-chunk store's), for the same questions, in the same run.
 *
 * Usage: bun benchmark/recall-latency.ts [--json]
 */
import { join } from "node:path";
import { loadModel } from "../src/embed/source.ts";
import { projectDataDir } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { Bm25Index } from "../src/memory/recall/bm25.ts";
import { closeWarmIndexes, MODES, recall } from "../src/memory/recall/recall.ts";
import { dotAll, topIndices } from "../src/memory/recall/snapshot.ts";
import { loadLocomo, locomoRecords, percentiles, scratchHome, writeChatLog } from "./memory-data.ts";

const QUESTIONS = 300;
const WARMUP = 20;
/** The store size the docs claim exact cosine is fine for. */
const SCALE_CHUNKS = 100_000;
const SCALE_DIMS = [64, 256] as const;
const TOP_K = 10;

/** Deterministic pseudo-random unit rows (a fixed LCG seed): the same matrix on every run. */
function unitRows(count: number, dim: number): Float32Array {
  const rows = new Float32Array(count * dim);
  let seed = 12345;
  for (let i = 0; i < rows.length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    rows[i] = seed / 2 ** 32 - 0.5;
  }
  for (let r = 0; r < count; r++) {
    let norm = 0;
    for (let d = 0; d < dim; d++) norm += rows[r * dim + d] ** 2;
    const scale = 1 / Math.sqrt(norm);
    for (let d = 0; d < dim; d++) rows[r * dim + d] *= scale;
  }
  return rows;
}

/** p50/p95 in ms of `run` over the questions, after a warm-up. */
function timed(questions: number, run: (q: number) => void): { p50ms: number; p95ms: number } {
  for (let q = 0; q < Math.min(WARMUP, questions); q++) run(q);
  const times: number[] = [];
  for (let q = 0; q < questions; q++) {
    const t = performance.now();
    run(q);
    times.push(performance.now() - t);
  }
  const { p50, p95 } = percentiles(times);
  return { p50ms: Number(p50.toFixed(2)), p95ms: Number(p95.toFixed(2)) };
}

/** Dense scoring + top-k over 10^5 synthetic vectors vs BM25 over 10^5 turns, same questions. */
async function scaleRows(
  turnTexts: string[],
  questions: string[],
): Promise<Record<string, number | string>[]> {
  const texts = Array.from({ length: SCALE_CHUNKS }, (_, i) => turnTexts[i % turnTexts.length]);
  const bm25 = Bm25Index.fromTexts(texts);
  const lexical = timed(questions.length, (q) => {
    topIndices(bm25.scores(questions[q]), TOP_K);
  });
  const model = await loadModel();
  const rows: Record<string, number | string>[] = [{ system: `bm25, ${SCALE_CHUNKS} turns`, ...lexical }];
  for (const dim of SCALE_DIMS) {
    // One draw for the chunks and the synthetic queries after them; the real query embeddings where the
    // model has this width.
    const drawn = unitRows(SCALE_CHUNKS + questions.length, dim);
    const matrix = drawn.subarray(0, SCALE_CHUNKS * dim);
    const queries =
      dim === model.dim ? await model.embedBatch(questions) : drawn.subarray(SCALE_CHUNKS * dim);
    const dense = timed(questions.length, (q) => {
      topIndices(dotAll(matrix, queries.subarray(q * dim, (q + 1) * dim), SCALE_CHUNKS, dim), TOP_K);
    });
    rows.push({ system: `dense exact cosine, ${SCALE_CHUNKS} × ${dim}`, ...dense });
  }
  for (const row of rows) row.timesBm25 = Number((Number(row.p50ms) / lexical.p50ms).toFixed(1));
  return rows;
}

async function main() {
  const scratch = scratchHome("latency");
  const rows: Record<string, number | string>[] = [];
  let scale: Record<string, number | string>[] = [];
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
    closeWarmIndexes();
    scale = await scaleRows(
      samples.flatMap(locomoRecords).map((r) => r.text),
      questions,
    );
  } finally {
    closeWarmIndexes();
    scratch.cleanup();
  }
  if (process.argv.includes("--json")) console.log(JSON.stringify({ chunks, rows, scale }, null, 2));
  else {
    console.log(
      `Warm recall latency, LoCoMo in one store (${chunks} chunks), ${QUESTIONS} questions per mode:`,
    );
    console.table(rows);
    console.log(
      `Scale: ${SCALE_CHUNKS} chunks, scoring + top-${TOP_K} per question (query embedding not included):`,
    );
    console.table(scale);
  }
}

await main();
