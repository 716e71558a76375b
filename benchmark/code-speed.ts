#!/usr/bin/env bun
/**
 * Code-search speed and token cost on the semble development repositories, next to ripgrep over the
 * same trees in the same run:
 *   - cold index: a full rebuild (chunks/s);
 *   - warm query: p50/p99 of a search against the loaded index, versus one `rg` process per query
 *     (what an agent pays for a grep) searching the query's words;
 *   - long queries: commit messages of 50–250 words from the repository's mirror (what an agent pastes
 *     when it asks about a change): warm p50/p95 next to the short queries' p50, and the first long
 *     query of a fresh process (`--first-query`, a child) next to the first short one;
 *   - re-index after one file changed (append a line to a file, refresh, restore);
 *   - tokens: characters of the snippets code_search returns by default (top 5, 10 lines each)
 *     versus the whole files a grep-and-read agent opens (the 5 files with most matching lines).
 *
 *   - a generated repository of many files (copies of the development repositories' code files,
 *     cycled into nested folders): cold index with parse workers and without, next to one `rg` over
 *     the same tree (the cost of reading it once), and where the time went.
 *
 *   TRIFORGE_BENCH_REPOS=/tmp/bench-repos bun benchmark/code-speed.ts [--repos a,b] [--generated 10000]
 *     [--mirrors /work/.mirror] [--json out.json]
 */
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { benchReposDir } from "./bench-repos.ts";
import { readBenchRepos } from "./checkout-repos.ts";
import { benchRoot, readAnnotations } from "./code-quality.ts";

/** Files a grep-and-read agent opens per query, and snippets code_search returns by default. */
const FILES_READ = 5;
const SNIPPETS = 5;
const SNIPPET_LINES = 10;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const median = (values: number[]) => percentile(values, 50);

/** The words of a query a grep user would type: identifiers and words of 3+ letters, stopwords dropped. */
function grepWords(query: string, stopwords: Set<string>): string[] {
  return [
    ...new Set(
      (query.match(/[A-Za-z_][A-Za-z0-9_]{2,}/g) ?? []).filter((w) => !stopwords.has(w.toLowerCase())),
    ),
  ];
}

function rg(root: string, words: string[], countPerFile: boolean): { ms: number; output: string } {
  const started = performance.now();
  const args = [
    "rg",
    "--no-config",
    "-i",
    countPerFile ? "-c" : "-n",
    ...words.flatMap((w) => ["-e", w]),
    ".",
  ];
  const proc = Bun.spawnSync(args, { cwd: root, stdout: "pipe", stderr: "ignore" });
  return { ms: performance.now() - started, output: proc.stdout.toString() };
}

/** Long queries per repository, and the words a long query has (a commit message, an issue). */
const LONG_QUERIES = 30;
const LONG_WORDS = [50, 250];

/** The newest commit messages of 50–250 words in the repository's mirror (none without a mirror). */
function longQueries(mirrors: string, url: string): string[] {
  const [owner, name] = new URL(url).pathname.replace(/^\/|\.git$/g, "").split("/");
  const gitDir = [
    join(mirrors, `${owner}+${name}`, "repo", ".git"),
    join(mirrors, `${owner}+${name}`, "repo"),
  ].find((dir) => existsSync(join(dir, "HEAD")));
  if (!gitDir) return [];
  const log = Bun.spawnSync(
    ["git", `--git-dir=${gitDir}`, "log", "-n", "2000", "--no-merges", "--format=%B%x1e"],
    {
      stdout: "pipe",
      stderr: "ignore",
    },
  ).stdout.toString();
  return log
    .split("\x1e")
    .map((message) => message.trim())
    .filter((message) => {
      const words = message.match(/[A-Za-z]{2,}/g)?.length ?? 0;
      return words >= LONG_WORDS[0] && words <= LONG_WORDS[1];
    })
    .slice(0, LONG_QUERIES);
}

/**
 * The first search of a fresh process over a saved index (a child: `--first-query <root>` with the
 * query on standard input), in ms: what the process's first long or short query pays for everything
 * built on first use. The index is loaded and the query embedded before the clock starts.
 */
async function firstQueryMs(root: string, query: string): Promise<number> {
  const child = Bun.spawn([process.execPath, import.meta.path, "--first-query", root], {
    stdin: new Blob([query]),
    stdout: "pipe",
    stderr: "inherit",
    env: process.env,
  });
  const output = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`first query in ${root} failed`);
  return Number(output.trim());
}

/** Files per folder of the generated repository (a realistic fan-out, not one flat folder). */
const GENERATED_FILES_PER_FOLDER = 40;

/**
 * A repository of `count` files copied from the development checkouts (their code files, cycled), in
 * nested folders; built once under /tmp and reused, so every run indexes the same bytes.
 */
async function generatedRepository(reposDir: string, count: number): Promise<string> {
  const target = `/tmp/triforge-generated-${count}`;
  if (existsSync(join(target, ".complete"))) return target;
  const { walkRepository } = await import("../src/code/walk.ts");
  const sources: string[] = [];
  for (const repo of readBenchRepos()) {
    const { root } = benchRoot(reposDir, repo);
    if (!existsSync(root)) continue;
    for (const file of walkRepository(root).files)
      if (file.language.kind === "code") sources.push(join(root, file.path));
  }
  for (let i = 0; i < count; i++) {
    const source = sources[i % sources.length];
    const folder = Math.floor(i / GENERATED_FILES_PER_FOLDER);
    const name = `${i}-${source.slice(source.lastIndexOf("/") + 1)}`;
    const path = join(target, `pkg${folder % 16}`, `mod${folder}`, name);
    mkdirSync(dirname(path), { recursive: true });
    copyFileSync(source, path);
  }
  writeFileSync(join(target, ".complete"), "");
  return target;
}

/** Cold index of a generated repository, with the configured parse workers and with none. */
async function generatedFigures(reposDir: string, count: number): Promise<void> {
  const root = realpathSync(await generatedRepository(reposDir, count));
  const { refreshIndex } = await import("../src/code/refresh.ts");
  const rgRuns: number[] = [];
  for (let round = 0; round < 3; round++) rgRuns.push(rg(root, ["configuration"], true).ms);
  for (const workers of [undefined, "0"]) {
    if (workers === undefined) delete process.env.TRIFORGE_CODE_WORKERS;
    else process.env.TRIFORGE_CODE_WORKERS = workers;
    const timings: Record<string, number> = {};
    const started = performance.now();
    const index = await refreshIndex(root, { force: true, timings });
    const coldMs = performance.now() - started;
    const megabytes = index.files.reduce((sum, f) => sum + f.size, 0) / 1e6;
    const label =
      workers === "0" ? "no parse workers" : `${index.report.parsedInWorkers} files parsed in workers`;
    console.log(
      `generated (${label}): ${index.files.length} files, ${megabytes.toFixed(1)} MB, ${index.texts.length} chunks: cold index ${Math.round(coldMs)} ms (${Math.round(index.texts.length / (coldMs / 1000))} chunks/s); one rg over the tree ${median(rgRuns).toFixed(0)} ms (${(coldMs / median(rgRuns)).toFixed(1)}× rg)`,
    );
    const phases = Object.entries(timings).sort((a, b) => b[1] - a[1]);
    console.log(`  ${phases.map(([phase, ms]) => `${phase} ${Math.round(ms)}`).join(" · ")}`);
  }
  delete process.env.TRIFORGE_CODE_WORKERS;
  console.log();
}

if (import.meta.main && process.argv[2] === "--first-query") {
  const root = process.argv[3];
  const query = (await new Response(Bun.stdin.stream()).text()).trim();
  const { openIndex } = await import("../src/code/code-search.ts");
  const { searchIndex } = await import("../src/code/search.ts");
  const { loadModel } = await import("../src/embed/source.ts");
  const model = await loadModel();
  const index = await openIndex(root, { refresh: "never" });
  const vector = await model.embed(query);
  const started = performance.now();
  searchIndex(index, query, vector, { topK: 10, content: "code" });
  console.log(performance.now() - started);
  process.exit(0);
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      repos: { type: "string" },
      json: { type: "string" },
      generated: { type: "string" },
      mirrors: { type: "string", default: "/work/.mirror" },
    },
  });
  const reposDir = benchReposDir();
  const { openIndex, searchLoaded } = await import("../src/code/code-search.ts");
  const { QUERY_STOPWORDS } = await import("../src/code/tokens.ts");
  const { loadModel } = await import("../src/embed/source.ts");
  const modelStarted = performance.now();
  await loadModel();
  console.log(
    `model load ${(performance.now() - modelStarted).toFixed(0)} ms (once per process, not in the figures below)\n`,
  );
  if (values.generated) await generatedFigures(reposDir, Number(values.generated));
  console.log(
    `${"repo".padEnd(13)} ${"files".padStart(5)} ${"chunks".padStart(6)} ${"index ms".padStart(8)} ${"chunks/s".padStart(8)} ${"reidx ms".padStart(8)} ${"q p50".padStart(7)} ${"q p99".padStart(7)} ${"long p50".padStart(8)} ${"long p95".padStart(8)} ${"1st long".padStart(8)} ${"1st shrt".padStart(8)} ${"rg p50".padStart(7)} ${"rg p99".padStart(7)} ${"tokens".padStart(7)}`,
  );
  const rows: Record<string, number | string>[] = [];
  for (const repo of readBenchRepos()) {
    if (values.repos && !values.repos.split(",").includes(repo.name)) continue;
    const { root } = benchRoot(reposDir, repo);
    if (!existsSync(root)) continue;
    const queries = readAnnotations(repo.name).map((q) => q.query);

    const coldStarted = performance.now();
    let index = await openIndex(root, { refresh: "now", force: true });
    const coldMs = performance.now() - coldStarted;

    // Warm queries: each query three times against the loaded index.
    for (const query of queries) await searchLoaded(index, query, { topK: 10 });
    const queryMs: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const query of queries) {
        const started = performance.now();
        await searchLoaded(index, query, { topK: 10 });
        queryMs.push(performance.now() - started);
      }
    }
    // Long queries, warm (after one pass) and the first of a fresh process, beside the short ones.
    const long = longQueries(values.mirrors!, repo.url);
    for (const query of long) await searchLoaded(index, query, { topK: 10 });
    const longMs: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const query of long) {
        const started = performance.now();
        await searchLoaded(index, query, { topK: 10 });
        longMs.push(performance.now() - started);
      }
    }
    const firstLongMs = long.length ? await firstQueryMs(root, long[0]) : 0;
    const firstShortMs = long.length ? await firstQueryMs(root, queries[0]) : 0;

    const rgMs: number[] = [];
    for (let round = 0; round < 3; round++)
      for (const query of queries) rgMs.push(rg(root, grepWords(query, QUERY_STOPWORDS), false).ms);

    // Re-index after one file changed: the largest file, so the figure is not flattered.
    const largest = index.files.reduce((a, b) => (b.size > a.size ? b : a));
    const file = join(root, largest.path);
    const original = readFileSync(file);
    appendFileSync(file, "\n// triforge benchmark edit\n");
    const reindexStarted = performance.now();
    index = await openIndex(root, { refresh: "now" });
    const reindexMs = performance.now() - reindexStarted;
    if (index.report.changed !== 1)
      throw new Error(`${repo.name}: expected one changed file, got ${index.report.changed}`);
    writeFileSync(file, original);
    index = await openIndex(root, { refresh: "now" });

    // Tokens: default code_search output versus reading the files grep ranks first.
    const ratios: number[] = [];
    for (const query of queries) {
      const { hits } = await searchLoaded(index, query, { topK: SNIPPETS, maxSnippetLines: SNIPPET_LINES });
      const snippetChars = hits.reduce((sum, h) => sum + h.content.length + h.file_path.length + 16, 0);
      const counts = rg(root, grepWords(query, QUERY_STOPWORDS), true)
        .output.trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const at = line.lastIndexOf(":");
          return { path: line.slice(0, at), count: Number(line.slice(at + 1)) };
        })
        .sort((a, b) => b.count - a.count)
        .slice(0, FILES_READ);
      const readChars = counts.reduce((sum, c) => sum + statSync(join(root, c.path)).size, 0);
      if (readChars > 0) ratios.push(snippetChars / readChars);
    }

    const row = {
      repo: repo.name,
      files: index.files.length,
      chunks: index.texts.length,
      indexMs: Math.round(coldMs),
      chunksPerSecond: Math.round(index.texts.length / (coldMs / 1000)),
      reindexMs: Math.round(reindexMs),
      queryP50: median(queryMs),
      queryP99: percentile(queryMs, 99),
      longQueries: long.length,
      longP50: median(longMs),
      longP95: percentile(longMs, 95),
      firstLongMs,
      firstShortMs,
      rgP50: median(rgMs),
      rgP99: percentile(rgMs, 99),
      tokenRatio: median(ratios),
    };
    rows.push(row);
    console.log(
      `${repo.name.padEnd(13)} ${String(row.files).padStart(5)} ${String(row.chunks).padStart(6)} ${String(row.indexMs).padStart(8)} ${String(row.chunksPerSecond).padStart(8)} ${String(row.reindexMs).padStart(8)} ${row.queryP50.toFixed(2).padStart(7)} ${row.queryP99.toFixed(2).padStart(7)} ${row.longP50.toFixed(2).padStart(8)} ${row.longP95.toFixed(2).padStart(8)} ${row.firstLongMs.toFixed(1).padStart(8)} ${row.firstShortMs.toFixed(1).padStart(8)} ${row.rgP50.toFixed(2).padStart(7)} ${row.rgP99.toFixed(2).padStart(7)} ${row.tokenRatio.toFixed(3).padStart(7)}`,
    );
  }
  const all = (key: string) => rows.map((r) => r[key] as number);
  const totalChunks = all("chunks").reduce((a, b) => a + b, 0);
  const totalMs = all("indexMs").reduce((a, b) => a + b, 0);
  console.log(`\nover ${rows.length} repositories:`);
  console.log(
    `  cold index      ${Math.round(totalChunks / (totalMs / 1000))} chunks/s (${totalChunks} chunks in ${(totalMs / 1000).toFixed(1)} s)`,
  );
  console.log(
    `  re-index 1 file median ${median(all("reindexMs"))} ms, max ${Math.max(...all("reindexMs"))} ms`,
  );
  console.log(
    `  warm query p50  ${median(all("queryP50")).toFixed(2)} ms vs rg ${median(all("rgP50")).toFixed(2)} ms (${(median(all("rgP50")) / median(all("queryP50"))).toFixed(1)}× faster than spawning rg)`,
  );
  console.log(
    `  warm query p99  ${median(all("queryP99")).toFixed(2)} ms vs rg ${median(all("rgP99")).toFixed(2)} ms (medians over repositories)`,
  );
  const withLong = rows.filter((r) => (r.longQueries as number) > 0);
  const longOf = (key: string) => withLong.map((r) => r[key] as number);
  if (withLong.length)
    console.log(
      `  long queries    warm p50 ${median(longOf("longP50")).toFixed(2)} ms, p95 ${median(longOf("longP95")).toFixed(2)} ms vs short p50 ${median(longOf("queryP50")).toFixed(2)} ms; first of a process ${median(longOf("firstLongMs")).toFixed(1)} ms (max ${Math.max(...longOf("firstLongMs")).toFixed(1)}) vs first short ${median(longOf("firstShortMs")).toFixed(1)} ms (medians over ${withLong.length} repositories with a mirror)`,
    );
  console.log(
    `  tokens          snippets are ${(median(all("tokenRatio")) * 100).toFixed(1)}% of the characters of the files grep-and-read opens (median)`,
  );
  if (values.json) writeFileSync(values.json, `${JSON.stringify(rows, null, 2)}\n`);
}
