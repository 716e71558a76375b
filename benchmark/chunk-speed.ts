#!/usr/bin/env bun
/**
 * Chunking, the chunker in the working tree against the one at a git revision, on every file of the
 * given repositories (with its grammar up to the indexer's 64k characters, by lines otherwise):
 *   - equality: every file's chunk boundaries from both (any difference is listed, exit 1);
 *   - speed: MB/s per language of each, timed in turns in this one process (median of the rounds),
 *     and the ratio — both run on each file in turn, and the box is shared, so only the ratio is
 *     worth comparing between runs.
 *
 *   TRIFORGE_BENCH_REPOS=/tmp/bench-repos bun benchmark/chunk-speed.ts [--against HEAD~1] [--rounds 5] [repo ...]
 *
 * `--against lines` compares each grammar with the line chunker instead (what a language costs, and
 * how many files it chunks differently, when it gains a grammar); differences are then expected.
 *
 * Repositories are names under TRIFORGE_BENCH_REPOS or paths; without any, a spread of languages.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { parseArgs } from "node:util";
import { chunkSource } from "../src/code/chunk.ts";
import { parserFor } from "../src/code/grammars.ts";
import type { GrammarName } from "../src/code/languages.ts";
import { walkRepository } from "../src/code/walk.ts";
import { benchReposDir } from "./bench-repos.ts";

/** The indexer chunks longer files by lines (indexer.ts TREE_SITTER_MAX_CHARS). */
const PARSED_MAX_CHARS = 64_000;
const DEFAULT_REPOS = [
  "abseil-cpp",
  "curl",
  "commons-lang",
  "aiohttp",
  "axios",
  "axum",
  "chi",
  "rack",
  "guzzle",
  "dapper",
  "trpc",
  "bash-it",
];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { against: { type: "string", default: "HEAD" }, rounds: { type: "string", default: "5" } },
});
const repos = positionals.length ? positionals : DEFAULT_REPOS;
const reposDir = repos.every(isAbsolute) ? "" : benchReposDir();

const againstLines = values.against === "lines";
/** The baseline chunker: chunk.ts as it was at the revision (its imports are type-only or lazy). */
async function baselineAt(revision: string): Promise<{ chunkSource: typeof chunkSource }> {
  const source = execFileSync("git", ["show", `${revision}:src/code/chunk.ts`], {
    cwd: join(import.meta.dir, ".."),
    encoding: "utf8",
  });
  const path = join(mkdtempSync(join(tmpdir(), "triforge-chunk-baseline-")), "chunk.ts");
  writeFileSync(path, source);
  return import(path);
}
const baseline: { chunkSource: typeof chunkSource } = againstLines
  ? { chunkSource: (text) => chunkSource(text, undefined) }
  : await baselineAt(values.against);

/** Files the indexer chunks by lines: no grammar, or too long to parse. */
const LINES = "(by lines)";
const byGrammar = new Map<GrammarName | typeof LINES, { path: string; text: string }[]>();
for (const repo of repos) {
  const root = isAbsolute(repo) ? repo : join(reposDir, repo);
  for (const file of walkRepository(root).files) {
    const text = readFileSync(join(root, file.path), "utf8");
    const grammar = file.language.grammar && text.length <= PARSED_MAX_CHARS ? file.language.grammar : LINES;
    const list = byGrammar.get(grammar) ?? [];
    list.push({ path: `${repo}/${file.path}`, text });
    byGrammar.set(grammar, list);
  }
}

const boundaries = (chunks: { startLine: number; endLine: number }[]) =>
  chunks.map((c) => `${c.startLine}-${c.endLine}`).join(",");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

let differing = 0;
let totalChars = 0;
const totals = { before: 0, after: 0 };
console.log(`chunker at ${values.against} -> working tree, ${values.rounds} rounds in turns`);
console.log("language       files      MB   before MB/s   after MB/s   ratio  same chunks");
for (const [grammar, files] of [...byGrammar].sort((a, b) => a[0].localeCompare(b[0]))) {
  const parser = grammar === LINES ? undefined : await parserFor(grammar);
  let same = 0;
  for (const { path, text } of files) {
    const before = boundaries(baseline.chunkSource(text, parser));
    const after = boundaries(chunkSource(text, parser));
    if (before === after) same++;
    else if (!againstLines && differing++ < 20)
      console.log(`  differs: ${path}\n    before ${before}\n    after  ${after}`);
  }
  const chars = files.reduce((sum, f) => sum + f.text.length, 0);
  // Both on each file in turn (alternating which goes first), so the box's load falls on both alike.
  const before: number[] = [];
  const after: number[] = [];
  for (let round = 0; round < Number(values.rounds); round++) {
    let beforeMs = 0;
    let afterMs = 0;
    for (let f = 0; f < files.length; f++) {
      const { text } = files[f];
      const newFirst = (f + round) % 2 === 1;
      const t0 = performance.now();
      (newFirst ? chunkSource : baseline.chunkSource)(text, parser);
      const t1 = performance.now();
      (newFirst ? baseline.chunkSource : chunkSource)(text, parser);
      const t2 = performance.now();
      afterMs += newFirst ? t1 - t0 : t2 - t1;
      beforeMs += newFirst ? t2 - t1 : t1 - t0;
    }
    before.push(beforeMs);
    after.push(afterMs);
  }
  totals.before += median(before);
  totals.after += median(after);
  totalChars += chars;
  const rate = (ms: number) => (chars / 1e3 / ms).toFixed(2).padStart(11);
  console.log(
    `${grammar.padEnd(12)} ${String(files.length).padStart(7)} ${(chars / 1e6).toFixed(2).padStart(7)} ${rate(median(before))} ${rate(median(after))}  ${(median(before) / median(after)).toFixed(2).padStart(5)}×  ${same}/${files.length}`,
  );
}
console.log(
  `all          ${(totalChars / 1e6).toFixed(2).padStart(15)} ${(totalChars / 1e3 / totals.before).toFixed(2).padStart(11)} ${(totalChars / 1e3 / totals.after).toFixed(2).padStart(11)}  ${(totals.before / totals.after).toFixed(2).padStart(5)}×  ${againstLines ? "(against lines)" : differing ? `${differing} files differ` : "all the same"}`,
);
process.exit(differing ? 1 : 0);
