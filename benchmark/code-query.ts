#!/usr/bin/env bun
/**
 * What one code query costs as the index grows, stage by stage, and against an earlier version of
 * the search in the same run:
 *
 *   bun benchmark/code-query.ts [--files 100,1000,10000] [--queries 200] [--rounds 3]
 *     [--baseline DIR] [--keep DIR]
 *
 * Indexes the generated workspaces of benchmark/http.ts (ten ~700-character functions a file, so
 * 1k/10k/100k chunks), embeds the load benchmark's kind of queries once, and times `searchIndex`
 * alone (top 8, every content kind) in this thread's CPU time, which other processes on a shared
 * machine barely disturb, next to wall time. `--baseline DIR` is a copy of an earlier `src/` tree
 * (`git archive <commit> src | tar -x -C DIR`, with node_modules linked): its `searchIndex` runs
 * over the same loaded index, rounds alternating which goes first, and every query's top 8 (ids and
 * scores) is compared. `--keep DIR` keeps the workspaces and indexes there for the next run.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
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
const TOP_K = 8;

const scratch = keep ? resolve(keep) : mkdtempSync(join(tmpdir(), "triforge-bench-query-"));
mkdirSync(scratch, { recursive: true });
process.env.TRIFORGE_HOME = join(scratch, "data");
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

interface Timing {
  cpuMs: number;
  wallMs: number;
}

/** Every query once through `search`: CPU and wall ms per query, and the results. */
function timeAll(
  search: Search,
  index: Awaited<ReturnType<typeof openIndex>>,
  queries: string[],
  vectors: Float32Array[],
): { timing: Timing; results: { chunk: number; score: number }[][] } {
  const results: { chunk: number; score: number }[][] = [];
  const wall = performance.now();
  const started = cpu();
  for (let q = 0; q < queries.length; q++)
    results.push(search(index, queries[q], vectors[q], { topK: TOP_K, content: "all" }));
  return {
    timing: {
      cpuMs: (cpu() - started) / queries.length,
      wallMs: (performance.now() - wall) / queries.length,
    },
    results,
  };
}

const sameResults = (a: { chunk: number; score: number }[], b: { chunk: number; score: number }[]) =>
  a.length === b.length && a.every((hit, i) => hit.chunk === b[i].chunk && hit.score === b[i].score);

const load = () => loadavg().map((l) => l.toFixed(2));
console.log(`load average at start ${load().join(" ")}; ${QUERIES} queries, ${ROUNDS} rounds, top ${TOP_K}`);
const rows: string[] = [];
try {
  for (const files of FILES) {
    // A generator per size, so a workspace is the same whichever sizes are asked for.
    const root = join(scratch, `ws-${files}`);
    if (!existsSync(root)) workspaceGenerator(14).generate(root, files);
    const queries = workspaceGenerator(14 + files).queries(QUERIES);
    const index = await openIndex(root);
    const vectors = await Promise.all(queries.map((q) => model.embed(q)));
    // First use builds each index's caches (norms, allowed files, feedback's postings turned around).
    timeAll(searchIndex, index, queries.slice(0, 5), vectors);
    if (baseline) timeAll(baseline, index, queries.slice(0, 5), vectors);
    const after: Timing[] = [];
    const before: Timing[] = [];
    let changed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ["before", "after"] : ["after", "before"];
      const runs: Record<string, ReturnType<typeof timeAll>> = {};
      for (const which of order) {
        if (which === "before" && !baseline) continue;
        runs[which] = timeAll(which === "before" ? baseline! : searchIndex, index, queries, vectors);
        (which === "before" ? before : after).push(runs[which].timing);
      }
      if (round === 0 && runs.before)
        changed = queries.filter(
          (_, q) => !sameResults(runs.before.results[q], runs.after.results[q]),
        ).length;
    }
    const timings: Record<string, number> = {};
    for (let q = 0; q < queries.length; q++)
      searchIndex(index, queries[q], vectors[q], { topK: TOP_K, content: "all", timings, clock: cpu });
    const total = Object.values(timings).reduce((a, b) => a + b, 0);
    const shares = Object.entries(timings)
      .map(([stage, ms]) => `${stage} ${((100 * ms) / total).toFixed(0)}%`)
      .join(", ");
    const cpuAfter = median(after.map((t) => t.cpuMs));
    const wallAfter = median(after.map((t) => t.wallMs));
    let line = `| ${index.texts.length} | `;
    if (baseline) {
      const cpuBefore = median(before.map((t) => t.cpuMs));
      const wallBefore = median(before.map((t) => t.wallMs));
      line += `${cpuBefore.toFixed(3)} (${wallBefore.toFixed(3)}) | ${cpuAfter.toFixed(3)} (${wallAfter.toFixed(3)}) | ${(cpuBefore / cpuAfter).toFixed(2)}× | ${queries.length - changed} / ${queries.length} |`;
    } else line += `${cpuAfter.toFixed(3)} (${wallAfter.toFixed(3)}) |`;
    rows.push(line);
    console.log(
      `${index.texts.length} chunks: ${line}\n  stages (CPU, ${(total / queries.length).toFixed(3)} ms a query): ${shares}`,
    );
  }
} finally {
  if (!keep) rmSync(scratch, { recursive: true, force: true });
}
console.log(`\nload average at end ${load().join(" ")}; medians of ${ROUNDS} rounds, CPU ms a query (wall)`);
console.log(
  baseline
    ? "| chunks | before | after | CPU speed-up | same top 8 |\n|---|---|---|---|---|"
    : "| chunks | searchIndex |\n|---|---|",
);
for (const row of rows) console.log(row);
