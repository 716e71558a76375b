#!/usr/bin/env bun
/**
 * What one code query costs as the index grows, stage by stage, and against an earlier version of
 * the search in the same run:
 *
 *   bun benchmark/code-query.ts [--files 100,1000,10000] [--queries 200] [--rounds 3]
 *     [--baseline DIR] [--keep DIR]
 *   TRIFORGE_BENCH_REPOS=/tmp/bench-repos bun benchmark/code-query.ts --repos [--baseline DIR]
 *
 * Indexes the generated workspaces of benchmark/http.ts (ten ~700-character functions a file, so
 * 1k/10k/100k chunks), embeds the load benchmark's kind of queries once, and times `searchIndex`
 * alone (top 8, every content kind) in this thread's CPU time, which other processes on a shared
 * machine barely disturb, next to wall time. `--baseline DIR` is a copy of an earlier `src/` tree
 * (`git archive <commit> src | tar -x -C DIR`, with node_modules linked): its `searchIndex` runs
 * over the same loaded index, rounds alternating which goes first, and every query's top 8 (ids and
 * scores) is compared. `--keep DIR` keeps the workspaces and indexes there for the next run.
 * `--repos` measures the development repositories' annotated queries instead (top 10 of code, as
 * code_search answers them by default), each repository's p50 and the median of those.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { benchReposDir } from "./bench-repos.ts";
import { readBenchRepos } from "./checkout-repos.ts";
import { benchRoot, readAnnotations } from "./code-quality.ts";
import { threadCpuClock } from "./cpu-clock.ts";
import { workspaceGenerator } from "./generated-workspace.ts";

const args = process.argv.slice(2);
const value = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const FILES = (value("files") ?? "100,1000,10000").split(",").map(Number);
const QUERIES = Number(value("queries") ?? 200);
const ROUNDS = Number(value("rounds") ?? 3);
const baselineDir = value("baseline");
const keep = value("keep");
const repos = args.includes("--repos");

const scratch = keep ? resolve(keep) : mkdtempSync(join(tmpdir(), "triforge-bench-query-"));
mkdirSync(scratch, { recursive: true });
// The repositories' indexes are the quality benchmarks' (benchReposDir's scratch home).
const reposDir = repos ? benchReposDir() : undefined;
if (!repos) process.env.TRIFORGE_HOME = join(scratch, "data");
const { openIndex } = await import("../src/code/code-search.ts");
const { searchIndex } = await import("../src/code/search.ts");
const { loadModel } = await import("../src/embed/source.ts");
type Search = typeof searchIndex;
const baseline: Search | undefined = baselineDir
  ? (await import(resolve(baselineDir, "src/code/search.ts"))).searchIndex
  : undefined;

const cpu = threadCpuClock() ?? (() => performance.now());
const model = await loadModel();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
type Loaded = Awaited<ReturnType<typeof openIndex>>;
type Options = Parameters<Search>[3];

interface Timing {
  cpuMs: number;
  wallMs: number;
}

/** Every query once through `search`: CPU and wall ms per query (each, and on average), and the results. */
function timeAll(
  search: Search,
  index: Loaded,
  queries: string[],
  vectors: Float32Array[],
  options: Options,
): { timing: Timing; perQuery: number[]; results: { chunk: number; score: number }[][] } {
  const results: { chunk: number; score: number }[][] = [];
  const perQuery: number[] = [];
  const wall = performance.now();
  const started = cpu();
  for (let q = 0; q < queries.length; q++) {
    const at = cpu();
    results.push(search(index, queries[q], vectors[q], options));
    perQuery.push(cpu() - at);
  }
  return {
    timing: {
      cpuMs: (cpu() - started) / queries.length,
      wallMs: (performance.now() - wall) / queries.length,
    },
    perQuery,
    results,
  };
}

interface Measured {
  before?: Timing;
  after: Timing;
  /** Medians of the per-query CPU times over every round. */
  p50Before?: number;
  p50After: number;
  same: number;
  stages: Record<string, number>;
}

/** Rounds of every query, alternating which search goes first; medians of the rounds. */
async function measure(index: Loaded, queries: string[], options: Options): Promise<Measured> {
  const vectors = await Promise.all(queries.map((q) => model.embed(q)));
  // First use builds each index's caches (norms, allowed files, feedback's chunk terms, int8 rows).
  timeAll(searchIndex, index, queries, vectors, options);
  if (baseline) timeAll(baseline, index, queries, vectors, options);
  const after: Timing[] = [];
  const before: Timing[] = [];
  const perBefore: number[] = [];
  const perAfter: number[] = [];
  let same = queries.length;
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ["before", "after"] : ["after", "before"];
    const runs: Record<string, ReturnType<typeof timeAll>> = {};
    for (const which of order) {
      if (which === "before" && !baseline) continue;
      const run = timeAll(which === "before" ? baseline! : searchIndex, index, queries, vectors, options);
      runs[which] = run;
      (which === "before" ? before : after).push(run.timing);
      (which === "before" ? perBefore : perAfter).push(...run.perQuery);
    }
    if (round === 0 && runs.before)
      same = queries.filter((_, q) => sameResults(runs.before.results[q], runs.after.results[q])).length;
  }
  const stages: Record<string, number> = {};
  for (let q = 0; q < queries.length; q++)
    searchIndex(index, queries[q], vectors[q], { ...options, timings: stages, clock: cpu });
  for (const stage of Object.keys(stages)) stages[stage] /= queries.length;
  const mid = (timings: Timing[]) => ({
    cpuMs: median(timings.map((t) => t.cpuMs)),
    wallMs: median(timings.map((t) => t.wallMs)),
  });
  return {
    before: baseline ? mid(before) : undefined,
    after: mid(after),
    p50Before: baseline ? median(perBefore) : undefined,
    p50After: median(perAfter),
    same,
    stages,
  };
}

function stageShares(stages: Record<string, number>): string {
  const total = Object.values(stages).reduce((a, b) => a + b, 0);
  const shares = Object.entries(stages).map(([stage, ms]) => `${stage} ${((100 * ms) / total).toFixed(0)}%`);
  return `stages (CPU, ${total.toFixed(3)} ms a query): ${shares.join(", ")}`;
}

const sameResults = (a: { chunk: number; score: number }[], b: { chunk: number; score: number }[]) =>
  a.length === b.length && a.every((hit, i) => hit.chunk === b[i].chunk && hit.score === b[i].score);

const load = () => loadavg().map((l) => l.toFixed(2));
console.log(`load average at start ${load().join(" ")}; ${ROUNDS} rounds`);
const rows: string[] = [];
try {
  if (repos) {
    const p50s: { before?: number; after: number }[] = [];
    let same = 0;
    let total = 0;
    for (const repo of readBenchRepos()) {
      const { root } = benchRoot(reposDir!, repo);
      if (!existsSync(root)) continue;
      const queries = readAnnotations(repo.name).map((q) => q.query);
      const index = await openIndex(root);
      const m = await measure(index, queries, { topK: 10, content: "code" });
      p50s.push({ before: m.p50Before, after: m.p50After });
      same += m.same;
      total += queries.length;
      const line = `| ${repo.name} | ${index.texts.length} | ${m.p50Before?.toFixed(3) ?? "–"} | ${m.p50After.toFixed(3)} | ${m.same} / ${queries.length} |`;
      rows.push(line);
      console.log(`${line}\n  ${stageShares(m.stages)}`);
    }
    const overall = (key: "before" | "after") => median(p50s.map((p) => p[key] ?? Number.NaN));
    rows.push(
      `| median of ${p50s.length} | | ${overall("before").toFixed(3)} | ${overall("after").toFixed(3)} | ${same} / ${total} |`,
    );
  } else {
    for (const files of FILES) {
      // A generator per size, so a workspace is the same whichever sizes are asked for.
      const root = join(scratch, `ws-${files}`);
      if (!existsSync(root)) workspaceGenerator(14).generate(root, files);
      const queries = workspaceGenerator(14 + files).queries(QUERIES);
      const index = await openIndex(root);
      const m = await measure(index, queries, { topK: 8, content: "all" });
      const cell = (t: Timing) => `${t.cpuMs.toFixed(3)} (${t.wallMs.toFixed(3)})`;
      const line = m.before
        ? `| ${index.texts.length} | ${cell(m.before)} | ${cell(m.after)} | ${(m.before.cpuMs / m.after.cpuMs).toFixed(2)}× | ${m.same} / ${queries.length} |`
        : `| ${index.texts.length} | ${cell(m.after)} |`;
      rows.push(line);
      console.log(`${line}\n  ${stageShares(m.stages)}`);
    }
  }
} finally {
  if (!keep) rmSync(scratch, { recursive: true, force: true });
}
console.log(`\nload average at end ${load().join(" ")}`);
if (repos)
  console.log(
    "per-query CPU p50 ms over the rounds, top 10 of code\n| repository | chunks | before | after | same top 10 |\n|---|---|---|---|---|",
  );
else
  console.log(
    `medians of the rounds, CPU ms a query (wall), top 8 of ${QUERIES} queries\n${
      baseline
        ? "| chunks | before | after | CPU speed-up | same top 8 |\n|---|---|---|---|---|"
        : "| chunks | searchIndex |\n|---|---|"
    }`,
  );
for (const row of rows) console.log(row);
