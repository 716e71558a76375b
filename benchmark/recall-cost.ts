#!/usr/bin/env bun
/**
 * What a query costs at a year's scale (issue 17, the query side), on LoCoMo's text repeated 1× and 16×
 * into one project (as benchmark/memory-scale.ts builds it) and on a kept large-vocabulary synthetic store:
 * - a fresh `triforge recall` (the compiled binary, a new process each run), hybrid and bm25, by CPU time,
 *   next to an empty Bun binary's start (same flags) measured in the same run, interleaved (and next to
 *   TRIFORGE_BASELINE_BINARY, an earlier build, when set);
 * - where a fresh process spends it, by phase (a fresh `bun` process running the same code from source);
 * - warm recall() p50/p95 in one process, hybrid and bm25, CPU and wall;
 * - PPR alone on 100 questions: the local push recall runs (sparse reset) against the Gauss–Seidel solver
 *   over every passage's prior it replaced (test/support/ppr-reference.ts, the baseline), with the CSR
 *   entries each reads and the nodes the push reached;
 * - ranking: hybrid and graph recall@10 of LoCoMo's questions asked of the whole one-project store (the
 *   copies of a turn folded into one), with the push against the exact solution of the full reset, and
 *   on every store the share of the exact hybrid top 10 the push keeps.
 *
 * Usage: bun benchmark/recall-cost.ts [--sizes 1,16] [--synthetic N] [--home DIR] [--runs 9]
 *   [--questions 300] [--json]
 * --home keeps the indexed stores there and reuses them on the next run (16× takes a minute to index).
 * --synthetic N measures DIR/synthetic-N too: the store `bun benchmark/memory-scale.ts --sizes 0
 * --synthetic N --keep` leaves (pass its folder as --home); its questions are the first six words of 100
 * of its chunks spread over the store, as memory-scale.ts asks it. TRIFORGE_TEST_BINARY=dist/triforge
 * reuses a built binary.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildTarget, hostTarget } from "../build/build.ts";
import { loadModel, resolveModelDir } from "../src/embed/source.ts";
import { chatLogPath, recallSnapshotPath, storePath } from "../src/home/paths.ts";
import { localPageRank } from "../src/memory/recall/ppr.ts";
import { closeWarmIndexes, loadMemoryIndex, rankChunks, recall } from "../src/memory/recall/recall.ts";
import { GRAPH_SETTINGS, type MemoryIndex } from "../src/memory/recall/snapshot.ts";
import { gaussSeidelPageRank } from "../test/support/ppr-reference.ts";
import { buildEmptyBinary } from "./baseline.ts";
import { evidenceTurnIds, loadLocomo, locomoRecords, percentiles, writeChatLog } from "./memory-data.ts";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1,16" },
    synthetic: { type: "string", default: "0" },
    home: { type: "string" },
    runs: { type: "string", default: "9" },
    questions: { type: "string", default: "300" },
    phases: { type: "string" },
    question: { type: "string" },
    json: { type: "boolean" },
  },
});
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

if (values.phases) {
  // A fresh process: CPU per phase of the first query, printed as JSON for the parent.
  const question = values.question as string;
  const phases: Record<string, number> = {};
  let last = cpuMs();
  const tick = (name: string) => {
    const now = cpuMs();
    phases[name] = Number((now - last).toFixed(1));
    last = now;
  };
  const model = await loadModel();
  tick("model load");
  const index = (await loadMemoryIndex(values.phases))!;
  tick("store open + recall.bin map and CRC");
  const vector = await model.embed(question);
  tick("embed query");
  const bm25 = index.bm25Scores(question);
  const dense = index.denseScores(vector);
  tick("bm25 + dense");
  const seeds = index.graphSeeds(question, vector, dense, bm25);
  tick("fact linking + seeds");
  localPageRank(
    index.graph,
    seeds,
    GRAPH_SETTINGS.damping,
    GRAPH_SETTINGS.pushTolerance,
    new Float64Array(index.chunkCount),
  );
  tick("ppr");
  index.smoothAlongSessions(index.feedbackBm25Scores(question, bm25));
  tick("feedback + smoothing");
  console.log(JSON.stringify(phases));
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "triforge-bench-recall-cost-"));
const home = values.home ?? join(work, "home");
process.env.TRIFORGE_HOME = join(home, "data");
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const [empty, triforge] = await Promise.all([
  buildEmptyBinary(work),
  process.env.TRIFORGE_TEST_BINARY ?? buildTarget(hostTarget(), work, resolveModelDir()),
]);
const earlier = process.env.TRIFORGE_BASELINE_BINARY;

function run(argv: string[]): { cpu: number; wall: number; stdout: string } {
  const started = performance.now();
  const proc = Bun.spawnSync(argv, { env: process.env, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${proc.exitCode}: ${proc.stderr}`);
  return {
    cpu: Number(proc.resourceUsage?.cpuTime.total ?? 0) / 1000,
    wall: performance.now() - started,
    stdout: proc.stdout.toString(),
  };
}
const round = (n: number) => Number(n.toFixed(1));
const median = (list: number[]) => round(percentiles(list).p50);

const samples = await loadLocomo();
const base = samples.flatMap(locomoRecords);
const locomoQuestions = samples.flatMap((s) => s.qa.map((q) => q.question));
const runs = Math.max(3, Number(values.runs));
const rows: Record<string, unknown>[] = [];

/** A LoCoMo store repeated `size` times into one project, indexed by the binary unless kept from before. */
function locomoStore(size: number): string {
  const root = join(home, `locomo-${size}x`);
  if (existsSync(storePath(root)) && existsSync(recallSnapshotPath(root))) return root;
  mkdirSync(join(root, ".triforge"), { recursive: true });
  writeFileSync(
    join(root, ".triforge", "config.json"),
    JSON.stringify({ storage: "local", llm: "none", exclude: [] }),
  );
  const records = [];
  for (let k = 0; k < size; k++)
    for (const r of base)
      records.push({ ...r, session_id: `${r.session_id}-x${k}`, uuid: `${r.uuid}-x${k}` });
  writeChatLog(chatLogPath(root), records);
  run([triforge, "index", `--project=${root}`]);
  return root;
}

/** A turn's id with its copy's suffix dropped: the 16 copies of a LoCoMo turn are one answer. */
const original = (uuid: string) => uuid.replace(/-x\d+$/, "");

/** The first `k` distinct turns of a ranked chunk list, copies folded. */
function foldedTurns(index: MemoryIndex, hits: { chunk: number; turns?: number[] }[], k: number): string[] {
  const out = new Set<string>();
  for (const { chunk, turns } of hits)
    for (const [i, t] of index.chunk(chunk).turns.entries()) {
      if (turns && !turns.includes(i)) continue;
      out.add(original(t.uuid));
      if (out.size === k) return [...out];
    }
  return [...out];
}

/** Runs `body` with graph search solving the full reset (every passage seeded) to a tight tolerance. */
async function exactly<T>(body: () => Promise<T>): Promise<T> {
  const { passageSeeds, pushTolerance } = GRAPH_SETTINGS;
  GRAPH_SETTINGS.passageSeeds = Number.POSITIVE_INFINITY;
  GRAPH_SETTINGS.pushTolerance = 1e-7;
  try {
    return await body();
  } finally {
    GRAPH_SETTINGS.passageSeeds = passageSeeds;
    GRAPH_SETTINGS.pushTolerance = pushTolerance;
  }
}

/** LoCoMo evidence recall@10 (turns, copies folded) of hybrid and graph, the push against the exact PPR. */
async function locomoRanking(index: MemoryIndex, copies: number, limit: number) {
  const tally = { hybrid: [0, 0], graph: [0, 0] } as Record<string, number[]>;
  let asked = 0;
  for (const sample of samples)
    for (const qa of sample.qa) {
      if (asked >= limit) break;
      if (![1, 2, 3, 4].includes(qa.category)) continue;
      const evidence = evidenceTurnIds(sample, qa);
      if (!evidence.size) continue;
      asked++;
      for (const mode of ["hybrid", "graph"] as const) {
        const depth = 10 * copies;
        const found = (turns: string[]) => turns.filter((t) => evidence.has(t)).length / evidence.size;
        const exact = await exactly(() => rankChunks(index, qa.question, mode, depth));
        tally[mode][0] += found(foldedTurns(index, exact, 10));
        tally[mode][1] += found(foldedTurns(index, await rankChunks(index, qa.question, mode, depth), 10));
      }
    }
  const pct = (n: number) => round((100 * n) / asked);
  return {
    questions: asked,
    hybridExact: pct(tally.hybrid[0]),
    hybrid: pct(tally.hybrid[1]),
    graphExact: pct(tally.graph[0]),
    graph: pct(tally.graph[1]),
  };
}

async function measure(name: string, root: string, questions: string[], copies: number) {
  const fresh: Record<string, number[]> = { empty: [], hybrid: [], bm25: [], earlier: [] };
  for (let i = 0; i < runs; i++) {
    const question = questions[(i * 7) % questions.length];
    fresh.empty.push(run([empty]).cpu);
    for (const mode of ["hybrid", "bm25"])
      fresh[mode].push(run([triforge, "recall", question, `--project=${root}`, "--mode", mode]).cpu);
    if (earlier) fresh.earlier.push(run([earlier, "recall", question, `--project=${root}`]).cpu);
  }
  const phases = JSON.parse(
    run([process.execPath, import.meta.path, "--phases", root, "--question", questions[0]]).stdout,
  );

  /** Wall and CPU time per query: on a shared box the wall clock also measures the neighbours. */
  const warm = async (mode: "hybrid" | "bm25") => {
    const wall: number[] = [];
    const cpu: number[] = [];
    await recall(root, questions[0], { mode });
    for (let q = 0; q < 100; q++) {
      const started = performance.now();
      const cpuStarted = cpuMs();
      await recall(root, questions[q % questions.length], { mode, topK: 5 });
      wall.push(performance.now() - started);
      cpu.push(cpuMs() - cpuStarted);
    }
    const w = percentiles(wall);
    const c = percentiles(cpu);
    return { p50: round(w.p50), p95: round(w.p95), cpuP50: round(c.p50), cpuP95: round(c.p95) };
  };
  const warmHybrid = await warm("hybrid");
  const warmBm25 = await warm("bm25");

  const index = (await loadMemoryIndex(root))!;
  const model = await loadModel();
  const P = index.chunkCount;
  const entries = index.graph.column.length + (index.graph.added?.column.length ?? 0);
  const ppr = { ours: [] as number[], oursEntries: [] as number[], touched: [] as number[] };
  const before = { ms: [] as number[], entries: [] as number[] };
  let keptOfTop10 = 0;
  const sample = questions.slice(0, 100);
  for (const question of sample) {
    const vector = await model.embed(question);
    const dense = index.denseScores(vector);
    const bm25 = index.bm25Scores(question);
    const full = index.fullGraphReset(question, vector, dense, bm25);
    let started = performance.now();
    const baseline = gaussSeidelPageRank(index.graph, full, {
      damping: GRAPH_SETTINGS.damping,
      tolerance: 1e-2,
      scored: P,
    });
    before.ms.push(performance.now() - started);
    before.entries.push(baseline.iterations * entries);
    const seeds = index.graphSeeds(question, vector, dense, bm25);
    started = performance.now();
    const pushed = localPageRank(
      index.graph,
      seeds,
      GRAPH_SETTINGS.damping,
      GRAPH_SETTINGS.pushTolerance,
      new Float64Array(P),
    );
    ppr.ours.push(performance.now() - started);
    ppr.oursEntries.push(pushed.entries);
    ppr.touched.push(pushed.touched);
    const exact = await exactly(() => rankChunks(index, question, "hybrid", 10 * copies));
    const ours = await rankChunks(index, question, "hybrid", 10 * copies);
    const exactTurns = new Set(foldedTurns(index, exact, 10));
    keptOfTop10 += foldedTurns(index, ours, 10).filter((t) => exactTurns.has(t)).length / 10;
  }
  const ranking = name.startsWith("locomo")
    ? await locomoRanking(index, copies, Number(values.questions))
    : undefined;
  closeWarmIndexes();
  const emptyCpu = median(fresh.empty);
  const row = {
    store: name,
    passages: P,
    graphNodes: index.graph.nodes,
    csrEntries: entries,
    facts: index.factCount,
    emptyBinaryCpuMs: emptyCpu,
    freshHybridCpuMs: median(fresh.hybrid),
    freshHybridRatio: round(median(fresh.hybrid) / emptyCpu),
    freshBm25CpuMs: median(fresh.bm25),
    freshBm25Ratio: round(median(fresh.bm25) / emptyCpu),
    ...(earlier
      ? {
          earlierBinaryHybridCpuMs: median(fresh.earlier),
          earlierRatio: round(median(fresh.earlier) / emptyCpu),
        }
      : {}),
    freshPhasesCpuMs: phases,
    warmHybridMs: warmHybrid,
    warmBm25Ms: warmBm25,
    ppr: {
      pushP50Ms: median(ppr.ours),
      pushEntriesP50: median(ppr.oursEntries),
      pushEntriesP95: round(percentiles(ppr.oursEntries).p95),
      pushTouchedP50: median(ppr.touched),
      gaussSeidelP50Ms: median(before.ms),
      gaussSeidelEntriesP50: median(before.entries),
    },
    hybridTop10KeptOf100: round(keptOfTop10),
    ranking,
  };
  rows.push(row);
  if (!values.json) {
    const r = row;
    const versus = earlier ? ` (earlier binary ${r.earlierBinaryHybridCpuMs} ms = ${r.earlierRatio}×)` : "";
    console.log(
      `${name} (${P} passages, ${r.graphNodes} nodes, ${entries} CSR entries, ${r.facts} facts): fresh recall hybrid ${r.freshHybridCpuMs} ms CPU = ${r.freshHybridRatio}× the empty binary's ${emptyCpu} ms${versus} (goal ≤ 25×), bm25 ${r.freshBm25CpuMs} ms = ${r.freshBm25Ratio}× | warm hybrid p50 ${warmHybrid.p50} / p95 ${warmHybrid.p95} ms, CPU ${warmHybrid.cpuP50} / ${warmHybrid.cpuP95} ms (goal p50 ≤ 20), bm25 ${warmBm25.p50} / ${warmBm25.p95} ms`,
    );
    console.log(`   fresh process, CPU ms by phase (source, not compiled): ${JSON.stringify(phases)}`);
    console.log(
      `   PPR alone, warm p50: local push ${r.ppr.pushP50Ms} ms, ${r.ppr.pushEntriesP50} CSR entries read (p95 ${r.ppr.pushEntriesP95}), ${r.ppr.pushTouchedP50} nodes reached | Gauss–Seidel over every passage (before) ${r.ppr.gaussSeidelP50Ms} ms, ${r.ppr.gaussSeidelEntriesP50} entries | hybrid top 10 kept from the exact solution: ${r.hybridTop10KeptOf100} of 100 questions' worth`,
    );
    if (ranking)
      console.log(
        `   LoCoMo recall@10 asked of the whole store (${ranking.questions} questions, copies folded): hybrid ${ranking.hybrid} (exact PPR ${ranking.hybridExact}), graph ${ranking.graph} (exact ${ranking.graphExact})`,
      );
  }
}

for (const size of String(values.sizes).split(",").map(Number)) {
  if (size > 0) await measure(`locomo-${size}x`, locomoStore(size), locomoQuestions, size);
}
const synthetic = Number(values.synthetic);
if (synthetic > 0) {
  const root = join(home, `synthetic-${synthetic}`);
  if (!existsSync(storePath(root)))
    throw new Error(
      `${root}: no store; build it with bun benchmark/memory-scale.ts --sizes 0 --synthetic ${synthetic} --keep`,
    );
  const index = (await loadMemoryIndex(root))!;
  const step = Math.max(1, Math.floor(index.chunkCount / 100));
  const questions = Array.from({ length: Math.min(100, index.chunkCount) }, (_, i) =>
    index
      .chunk(i * step)
      .text.split(" ")
      .slice(0, 6)
      .join(" "),
  );
  closeWarmIndexes();
  await measure(`synthetic-${synthetic}`, root, questions, 1);
}
if (values.json) console.log(JSON.stringify({ rows }, null, 2));
