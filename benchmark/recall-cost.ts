#!/usr/bin/env bun
/**
 * What a query costs at a year's scale (issue 17, the query side): LoCoMo's text repeated 1× and 16× into
 * one project (as benchmark/memory-scale.ts builds it), then
 * - a fresh `triforge recall` (the compiled binary, a new process each run), hybrid and bm25, by CPU time,
 *   next to an empty Bun binary's start (same flags) measured in the same run, interleaved;
 * - where a fresh process spends it, by phase (a fresh `bun` process running the same code from source:
 *   model load, store open + recall.bin map and CRC, the first query's parts);
 * - warm recall() p50/p95 in one process, hybrid and bm25;
 * - PPR alone on the first 100 questions' reset vectors: the Gauss–Seidel solver recall runs against the
 *   power iteration it replaced (a copy below, the baseline), with their passes and top-10 agreement.
 *
 * Usage: bun benchmark/recall-cost.ts [--sizes 1,16] [--home DIR] [--runs 9] [--json]
 * --home keeps the indexed stores there and reuses them on the next run (16× takes a minute to index).
 * TRIFORGE_TEST_BINARY=dist/triforge reuses a built binary.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildTarget, hostTarget } from "../build/build.ts";
import { loadModel, resolveModelDir } from "../src/embed/source.ts";
import { chatLogPath, recallSnapshotPath, storePath } from "../src/home/paths.ts";
import { personalizedPageRank } from "../src/memory/recall/ppr.ts";
import { closeWarmIndexes, loadMemoryIndex, recall } from "../src/memory/recall/recall.ts";
import { GRAPH_SETTINGS, topIndices } from "../src/memory/recall/snapshot.ts";
import { powerIteration } from "../test/support/ppr-reference.ts";
import { buildEmptyBinary } from "./baseline.ts";
import { loadLocomo, locomoRecords, percentiles, writeChatLog } from "./memory-data.ts";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1,16" },
    home: { type: "string" },
    runs: { type: "string", default: "9" },
    phases: { type: "string" },
    json: { type: "boolean" },
  },
});
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const QUESTION = "What did Caroline research about adoption agencies?";

if (values.phases) {
  // A fresh process: CPU per phase of the first query, printed as JSON for the parent.
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
  const vector = await model.embed(QUESTION);
  tick("embed query");
  const bm25 = index.bm25Scores(QUESTION);
  const dense = index.denseScores(vector);
  tick("bm25 + dense");
  const reset = index.graphReset(QUESTION, vector, dense, bm25);
  tick("fact linking");
  personalizedPageRank(index.graph, reset, {
    damping: GRAPH_SETTINGS.damping,
    tolerance: GRAPH_SETTINGS.pprTolerance,
    scored: index.chunkCount,
  });
  tick("ppr");
  index.smoothAlongSessions(index.feedbackBm25Scores(QUESTION, bm25));
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
const median = (list: number[]) => Number(percentiles(list).p50.toFixed(1));

const samples = await loadLocomo();
const base = samples.flatMap(locomoRecords);
const questions = samples.flatMap((s) => s.qa.map((q) => q.question));
const runs = Math.max(3, Number(values.runs));
const rows: Record<string, unknown>[] = [];

for (const size of String(values.sizes).split(",").map(Number)) {
  const root = join(home, `locomo-${size}x`);
  if (!existsSync(storePath(root)) || !existsSync(recallSnapshotPath(root))) {
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
  }
  const fresh: Record<string, number[]> = { empty: [], hybrid: [], bm25: [] };
  for (let i = 0; i < runs; i++) {
    fresh.empty.push(run([empty]).cpu);
    for (const mode of ["hybrid", "bm25"])
      fresh[mode].push(run([triforge, "recall", questions[i * 7], `--project=${root}`, "--mode", mode]).cpu);
  }
  const phases = JSON.parse(run([process.execPath, import.meta.path, "--phases", root]).stdout);

  /** Wall and CPU time per query: on a shared box the wall clock also measures the neighbours. */
  const warm = async (mode: "hybrid" | "bm25") => {
    const wall: number[] = [];
    const cpu: number[] = [];
    await recall(root, questions[0], { mode });
    for (let q = 0; q < 100; q++) {
      const started = performance.now();
      const cpuStarted = cpuMs();
      await recall(root, questions[q], { mode, topK: 5 });
      wall.push(performance.now() - started);
      cpu.push(cpuMs() - cpuStarted);
    }
    const w = percentiles(wall);
    const c = percentiles(cpu);
    const round = (n: number) => Number(n.toFixed(1));
    return { p50: round(w.p50), p95: round(w.p95), cpuP50: round(c.p50), cpuP95: round(c.p95) };
  };
  const warmHybrid = await warm("hybrid");
  const warmBm25 = await warm("bm25");

  const index = (await loadMemoryIndex(root))!;
  const model = await loadModel();
  const ppr = {
    ours: [] as number[],
    oursPasses: 0,
    baseline: [] as number[],
    baselinePasses: 0,
    sameTop10: 0,
  };
  const P = index.chunkCount;
  for (const question of questions.slice(0, 100)) {
    const vector = await model.embed(question);
    const reset = index.graphReset(question, vector, index.denseScores(vector), index.bm25Scores(question));
    let started = performance.now();
    const ours = personalizedPageRank(index.graph, reset, {
      damping: GRAPH_SETTINGS.damping,
      tolerance: GRAPH_SETTINGS.pprTolerance,
      scored: P,
    });
    ppr.ours.push(performance.now() - started);
    started = performance.now();
    const before = powerIteration(index.graph, reset, GRAPH_SETTINGS.damping, 1e-8, 100);
    ppr.baseline.push(performance.now() - started);
    ppr.oursPasses += ours.iterations;
    ppr.baselinePasses += before.iterations;
    const a = topIndices(ours.scores.subarray(0, P), 10).join();
    if (a === topIndices(before.scores.subarray(0, P), 10).join()) ppr.sameTop10++;
  }
  closeWarmIndexes();
  const emptyCpu = median(fresh.empty);
  const row = {
    store: `locomo-${size}x`,
    turns: base.length * size,
    csrEntries: index.graph.column.length,
    emptyBinaryCpuMs: emptyCpu,
    freshHybridCpuMs: median(fresh.hybrid),
    freshHybridRatio: Number((median(fresh.hybrid) / emptyCpu).toFixed(1)),
    freshBm25CpuMs: median(fresh.bm25),
    freshBm25Ratio: Number((median(fresh.bm25) / emptyCpu).toFixed(1)),
    freshPhasesCpuMs: phases,
    warmHybridMs: warmHybrid,
    warmBm25Ms: warmBm25,
    ppr: {
      oursP50Ms: median(ppr.ours),
      oursPasses: ppr.oursPasses / 100,
      powerIterationP50Ms: median(ppr.baseline),
      powerIterationPasses: ppr.baselinePasses / 100,
      sameTop10Of100: ppr.sameTop10,
    },
  };
  rows.push(row);
  if (!values.json) {
    const r = row;
    console.log(
      `${r.store} (${r.turns} turns, ${r.csrEntries} CSR entries): fresh recall hybrid ${r.freshHybridCpuMs} ms CPU = ${r.freshHybridRatio}× the empty binary's ${emptyCpu} ms (goal ≤ 25×), bm25 ${r.freshBm25CpuMs} ms = ${r.freshBm25Ratio}× | warm hybrid p50 ${warmHybrid.p50} / p95 ${warmHybrid.p95} ms, CPU ${warmHybrid.cpuP50} / ${warmHybrid.cpuP95} ms (goal p50 ≤ 20), bm25 ${warmBm25.p50} / ${warmBm25.p95} ms`,
    );
    console.log(`   fresh process, CPU ms by phase (source, not compiled): ${JSON.stringify(phases)}`);
    console.log(
      `   PPR alone, warm: Gauss–Seidel p50 ${r.ppr.oursP50Ms} ms (${r.ppr.oursPasses} sweeps) vs power iteration ${r.ppr.powerIterationP50Ms} ms (${r.ppr.powerIterationPasses} iterations) = ${(r.ppr.powerIterationP50Ms / r.ppr.oursP50Ms).toFixed(1)}×; same top 10 on ${r.ppr.sameTop10Of100} of 100 questions`,
    );
  }
}
if (values.json) console.log(JSON.stringify({ rows }, null, 2));
