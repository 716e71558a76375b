#!/usr/bin/env bun
/**
 * Do code-search snippets equal the file? Runs the development queries of the code-search benchmark,
 * compares every line the hits return with the same line of the file on disk, and lists every
 * difference (redaction is the only thing that may change a line, and only for a credential).
 *
 *   TRIFORGE_BENCH_REPOS=/tmp/bench-repos bun benchmark/code-fidelity.ts [--repos a,b] [--top-k 10] [--force] [--all]
 *   bun benchmark/code-fidelity.ts --tree node_modules
 *
 * `--tree DIR` instead reads every source or text file under a folder no ranking was tuned on (this
 * project's own node_modules after `bun install`: 9k files, 1.7M lines) and lists every line code-mode
 * redaction alters, next to the count conversation mode alters.
 * Baseline, same run: the same returned lines as conversation-mode redaction would leave them (a line
 * counts as altered when a span `findSecrets` returns for the whole file touches it). `--all` also
 * counts every line of every indexed file both ways, and lists the code-mode ones.
 * Indexes go to a scratch TRIFORGE_HOME (see bench-repos.ts); `--force` rebuilds them, which is needed
 * after a change to the redaction rules (an index is only re-redacted when its files change).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { findSecrets, type Finding } from "../src/privacy/index.ts";
import { benchReposDir } from "./bench-repos.ts";
import { readBenchRepos } from "./checkout-repos.ts";
import { benchRoot, readAnnotations } from "./code-quality.ts";

const { values } = parseArgs({
  options: {
    repos: { type: "string" },
    "top-k": { type: "string", default: "10" },
    force: { type: "boolean" },
    all: { type: "boolean" },
    tree: { type: "string" },
  },
});
/** The files `--tree` reads: source and text. */
const TREE_EXTENSIONS = /\.(?:[cm]?[jt]sx?|json|md|py|c|h|cc|go|rs|ya?ml|sh)$/;
const topK = Number(values["top-k"]);
if (values.tree) {
  fidelityOfTree(values.tree);
  process.exit(0);
}
const reposDir = benchReposDir();
const { openIndex, searchLoaded } = await import("../src/code/code-search.ts");

/** The lines of `text` that any of `spans` touches (1-based line numbers). */
function touchedLines(text: string, spans: Finding[]): Set<number> {
  const touched = new Set<number>();
  let line = 1;
  let p = 0;
  for (const span of spans) {
    for (; p < span.start; p++) if (text.charCodeAt(p) === 10) line++;
    touched.add(line);
    for (; p < span.end; p++) if (text.charCodeAt(p) === 10) touched.add(++line);
  }
  return touched;
}

/** The kinds of the markers in a returned line: `[REDACTED:aws]` → aws. */
const markerKinds = (line: string) => [...line.matchAll(/\[REDACTED:([a-z0-9_]+)\]/g)].map((m) => m[1]);

/** The file line and the returned line, from a little before their first difference. */
function around(file: string, returned: string): string {
  let i = 0;
  while (i < file.length && file[i] === returned[i]) i++;
  const from = Math.max(0, i - 50);
  return `${JSON.stringify(file.slice(from, i + 90))}\n      → ${JSON.stringify(returned.slice(from, i + 90))}`;
}

function per10k(altered: number, lines: number): string {
  return (lines ? (altered * 1e4) / lines : 0).toFixed(2);
}

const totals = {
  bom: 0,
  queries: 0,
  hits: 0,
  lines: 0,
  altered: 0,
  baseline: 0,
  allLines: 0,
  allCode: 0,
  allBase: 0,
};
const altered: string[] = [];
const alteredAll: string[] = [];
const kinds = new Map<string, number>();
for (const repo of readBenchRepos()) {
  if (values.repos && !values.repos.split(",").includes(repo.name)) continue;
  const { root } = benchRoot(reposDir, repo);
  const index = await openIndex(root, { refresh: "now", force: values.force });
  const fileLines = new Map<string, string[]>();
  const conversationTouched = new Map<string, Set<number>>();
  const readFile = (path: string) => {
    let lines = fileLines.get(path);
    if (!lines) {
      const text = readFileSync(join(root, path), "utf8");
      lines = text.split(/\r?\n/);
      fileLines.set(path, lines);
      conversationTouched.set(path, touchedLines(text, findSecrets(text)));
    }
    return lines;
  };
  // One returned line is counted once however many queries return it.
  const seen = new Set<string>();
  let repoLines = 0;
  let repoAltered = 0;
  let repoBaseline = 0;
  for (const query of readAnnotations(repo.name)) {
    totals.queries++;
    const { hits } = await searchLoaded(index, query.query, { topK, mode: "hybrid" });
    for (const hit of hits) {
      totals.hits++;
      const lines = readFile(hit.file_path);
      const returned = hit.content.split("\n");
      for (let k = 0; k < returned.length; k++) {
        const n = hit.start_line + k;
        const key = `${hit.file_path}:${n}`;
        if (seen.has(key)) continue;
        seen.add(key);
        repoLines++;
        if (conversationTouched.get(hit.file_path)?.has(n)) repoBaseline++;
        const original = lines[n - 1] ?? "";
        if (returned[k] === original) continue;
        // The indexer decodes files as UTF-8 decoders do, dropping a leading byte-order mark: not redaction.
        if (n === 1 && original === `\ufeff${returned[k]}`) {
          totals.bom++;
          continue;
        }
        repoAltered++;
        for (const kind of markerKinds(returned[k])) kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        altered.push(
          `   ${repo.name} ${key} [${markerKinds(returned[k]).join(",")}]\n      ${around(original, returned[k])}`,
        );
      }
    }
  }
  totals.lines += repoLines;
  totals.altered += repoAltered;
  totals.baseline += repoBaseline;
  let allNote = "";
  if (values.all) {
    let code = 0;
    let base = 0;
    let lines = 0;
    for (const file of index.files) {
      const text = readFileSync(join(root, file.path), "utf8");
      lines += text.split("\n").length;
      const codeLines = touchedLines(text, findSecrets(text, { mode: "code" }));
      code += codeLines.size;
      base += touchedLines(text, findSecrets(text)).size;
      const split = text.split(/\r?\n/);
      for (const n of codeLines)
        alteredAll.push(`   ${repo.name} ${file.path}:${n}  ${JSON.stringify(split[n - 1]?.slice(0, 140))}`);
    }
    totals.allLines += lines;
    totals.allCode += code;
    totals.allBase += base;
    allNote = `   all lines: ${lines}, code mode ${code}, conversation ${base}`;
  }
  console.log(
    `${repo.name.padEnd(14)} ${String(repoLines).padStart(6)} returned lines, ${String(repoAltered).padStart(3)} altered (conversation rules: ${repoBaseline})${allNote}`,
  );
}

console.log(
  `\n== ${totals.queries} queries, top ${topK}: ${totals.hits} hits, ${totals.lines} distinct returned lines`,
);
console.log(
  `   code search (code mode)   ${String(totals.altered).padStart(5)} altered  ${per10k(totals.altered, totals.lines)} per 10k lines (goal ≤ 1, each a credential)`,
);
console.log(
  `   conversation-mode rules   ${String(totals.baseline).padStart(5)} altered  ${per10k(totals.baseline, totals.lines)} per 10k lines (baseline, same lines)`,
);
console.log(
  `   first lines that differ only by the byte-order mark the indexer drops: ${totals.bom} (not counted)`,
);
console.log(`   markers in altered lines: ${[...kinds].map(([k, n]) => `${k}×${n}`).join(", ") || "none"}`);
if (altered.length) console.log(`\n== every altered returned line\n${altered.join("\n")}`);
if (values.all) {
  console.log(
    `\n== every line of the ${totals.allLines} indexed lines: code mode alters ${totals.allCode} (${per10k(totals.allCode, totals.allLines)} per 10k), conversation mode ${totals.allBase} (${per10k(totals.allBase, totals.allLines)} per 10k)`,
  );
  console.log(alteredAll.join("\n"));
}

/** Every line of every source or text file under `dir` (up to 1 MB a file, minified files left out). */
function fidelityOfTree(dir: string): void {
  const files: string[] = [];
  // Symbolic links are not followed (node_modules/.bin links back into the tree).
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(dir, folder), { withFileTypes: true })) {
      const name = folder ? `${folder}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(name);
      else if (entry.isFile() && TREE_EXTENSIONS.test(name) && !name.endsWith(".min.js")) files.push(name);
    }
  };
  walk("");
  let lines = 0;
  let code = 0;
  let conversation = 0;
  let read = 0;
  const listed: string[] = [];
  for (const name of files) {
    const path = join(dir, name);
    let text: string;
    try {
      if (statSync(path).size > 1_000_000) continue;
      text = readFileSync(path, "utf8");
    } catch {
      continue;
    }
    read++;
    lines += text.split("\n").length;
    const spans = findSecrets(text, { mode: "code" });
    const touched = touchedLines(text, spans);
    code += touched.size;
    conversation += touchedLines(text, findSecrets(text)).size;
    const split = text.split(/\r?\n/);
    for (const n of touched) listed.push(`   ${name}:${n}  ${JSON.stringify(split[n - 1]?.slice(0, 160))}`);
  }
  console.log(`== ${read} files under ${dir}, ${lines} lines`);
  console.log(
    `   code mode          ${String(code).padStart(6)} lines altered  ${per10k(code, lines)} per 10k`,
  );
  console.log(
    `   conversation mode  ${String(conversation).padStart(6)} lines altered  ${per10k(conversation, lines)} per 10k (baseline, same run)`,
  );
  if (listed.length) console.log(listed.join("\n"));
}
