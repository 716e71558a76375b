#!/usr/bin/env bun
/**
 * Code-search quality on the semble development set: NDCG@10 of hybrid search next to BM25 alone
 * (same chunks, same tokens, no fusion or rerank), in the same run, overall and per category.
 *
 *   TRIFORGE_BENCH_REPOS=/tmp/bench-repos bun benchmark/code-quality.ts [--repos a,b] [--force] [--json out.json]
 *
 * Repositories come from benchmark/checkout-repos.ts. The metric is ../shared/eval/README.md's:
 * binary gains; a target is hit by the first top-10 chunk whose repository path ends with the target
 * path at a `/` (semble's path_matches) and overlaps its lines when it has a span; relevant and
 * secondary targets count equally; IDCG = min(10, targets); averaged per repository, then over repositories.
 * `--json` also writes each query's scores, so two runs can be compared query by query.
 * Indexes go to a scratch TRIFORGE_HOME (kept between runs unless --force) so user data is untouched.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchReposDir } from "./bench-repos.ts";
import { BENCH_DIR, type BenchRepo, readBenchRepos } from "./checkout-repos.ts";

const K = 10;

export type Target = string | { path: string; start_line?: number; end_line?: number };
export interface Query {
  query: string;
  relevant: Target[];
  secondary?: Target[];
  category: string;
}
export interface Hit {
  file_path: string;
  start_line: number;
  end_line: number;
}

export function readAnnotations(name: string): Query[] {
  return JSON.parse(readFileSync(join(BENCH_DIR, "annotations", `${name}.json`), "utf8"));
}

/** Where a repository's checkout is and the prefix that turns index paths into repository paths. */
export function benchRoot(reposDir: string, repo: BenchRepo): { root: string; prefix: string } {
  const prefix = repo.benchmark_root ? `${repo.benchmark_root.replace(/\/$/, "")}/` : "";
  return { root: join(reposDir, repo.name, repo.benchmark_root ?? ""), prefix };
}

/**
 * Whether `path` is `target` or ends with `/target`: a whole path component, as semble's
 * `path_matches` compares (`bash_completions.go` is not the target `completions.go`).
 */
export function pathMatches(path: string, target: string): boolean {
  return path === target || path.endsWith(`/${target}`);
}

function hits(target: Target, hit: Hit, prefix: string): boolean {
  const path = prefix + hit.file_path;
  if (typeof target === "string") return pathMatches(path, target);
  if (!pathMatches(path, target.path)) return false;
  if (target.start_line === undefined || target.end_line === undefined) return true;
  return hit.start_line <= target.end_line && hit.end_line >= target.start_line;
}

export function ndcgAt10(results: Hit[], query: Query, prefix: string): number {
  const targets = [...query.relevant, ...(query.secondary ?? [])];
  if (!targets.length) return 0;
  const gains = new Array<number>(K).fill(0);
  for (const target of targets) {
    const rank = results.slice(0, K).findIndex((hit) => hits(target, hit, prefix));
    if (rank >= 0) gains[rank] = 1;
  }
  const dcg = gains.reduce((sum, gain, i) => sum + gain / Math.log2(i + 2), 0);
  let ideal = 0;
  for (let i = 0; i < Math.min(K, targets.length); i++) ideal += 1 / Math.log2(i + 2);
  return dcg / ideal;
}

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      repos: { type: "string" },
      force: { type: "boolean" },
      json: { type: "string" },
      verbose: { type: "boolean" },
    },
  });
  const reposDir = benchReposDir();
  const { openIndex, searchLoaded } = await import("../src/code/code-search.ts");
  const checkout = existsSync(join(reposDir, "checkout.json"))
    ? JSON.parse(readFileSync(join(reposDir, "checkout.json"), "utf8"))
    : {};

  const modes = ["hybrid", "bm25"] as const;
  type Scores = Record<(typeof modes)[number], number[]>;
  const perRepo: {
    name: string;
    language: string;
    pinned: boolean;
    ndcg: Record<string, number>;
    byCategory: Record<string, Scores>;
    queries: { query: string; category: string; hybrid: number; bm25: number }[];
  }[] = [];
  for (const repo of readBenchRepos()) {
    if (values.repos && !values.repos.split(",").includes(repo.name)) continue;
    const { root, prefix } = benchRoot(reposDir, repo);
    if (!existsSync(root)) {
      console.error(`${repo.name}: not checked out, skipped`);
      continue;
    }
    const index = await openIndex(root, { refresh: "now", force: values.force });
    const scores: Scores = { hybrid: [], bm25: [] };
    const byCategory: Record<string, Scores> = {};
    const queries: (typeof perRepo)[number]["queries"] = [];
    for (const query of readAnnotations(repo.name)) {
      byCategory[query.category] ??= { hybrid: [], bm25: [] };
      const scored = { query: query.query, category: query.category, hybrid: 0, bm25: 0 };
      for (const mode of modes) {
        const { hits: results } = await searchLoaded(index, query.query, { topK: K, mode });
        const score = ndcgAt10(results, query, prefix);
        scores[mode].push(score);
        byCategory[query.category][mode].push(score);
        scored[mode] = score;
        if (values.verbose && mode === "hybrid" && score < 1) {
          console.log(`  ${score.toFixed(2)} [${query.category}] ${query.query}`);
          console.log(
            `      want ${[...query.relevant, ...(query.secondary ?? [])].map((t) => (typeof t === "string" ? t : t.path)).join(", ")}`,
          );
          console.log(`      got  ${results.map((h) => `${h.file_path}:${h.start_line}`).join(", ")}`);
        }
      }
      queries.push(scored);
    }
    const ndcg = { hybrid: mean(scores.hybrid), bm25: mean(scores.bm25) };
    perRepo.push({
      name: repo.name,
      language: repo.language,
      pinned: checkout[repo.name]?.pinned ?? true,
      ndcg,
      byCategory,
      queries,
    });
    console.log(
      `${repo.name.padEnd(14)} ${repo.language.padEnd(11)} hybrid ${ndcg.hybrid.toFixed(3)}  bm25 ${ndcg.bm25.toFixed(3)}  (${index.files.length} files, ${index.texts.length} chunks)`,
    );
  }
  const overall = Object.fromEntries(modes.map((m) => [m, mean(perRepo.map((r) => r.ndcg[m]))]));
  const categories = [...new Set(perRepo.flatMap((r) => Object.keys(r.byCategory)))].sort();
  const byCategory = Object.fromEntries(
    categories.map((c) => [
      c,
      Object.fromEntries(
        modes.map((m) => [
          m,
          mean(perRepo.filter((r) => r.byCategory[c]).map((r) => mean(r.byCategory[c][m]))),
        ]),
      ),
    ]),
  );
  console.log(`\nNDCG@10 over ${perRepo.length} repositories (mean of per-repository means)`);
  console.log(`${"".padEnd(14)} ${"hybrid".padStart(7)} ${"bm25".padStart(7)} ${"ratio".padStart(7)}`);
  for (const [name, s] of [
    ["overall", overall] as const,
    ...categories.map((c) => [c, byCategory[c]] as const),
  ]) {
    console.log(
      `${name.padEnd(14)} ${s.hybrid.toFixed(3).padStart(7)} ${s.bm25.toFixed(3).padStart(7)} ${(s.hybrid / s.bm25).toFixed(2).padStart(6)}×`,
    );
  }
  const unpinned = perRepo.filter((r) => !r.pinned).map((r) => r.name);
  if (unpinned.length)
    console.log(`(checked out at mirror HEAD, pinned revision unavailable: ${unpinned.join(", ")})`);
  if (values.json)
    writeFileSync(values.json, `${JSON.stringify({ overall, byCategory, perRepo }, null, 2)}\n`);
}
