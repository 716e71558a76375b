/**
 * Privacy benchmark: recall and false-positive rate of `redact()` on the labelled corpus, next to the naive
 * rule set of the design run in the same process, plus the 1 MB adversarial timings next to a plain scan.
 *
 *   bun run benchmark/privacy.ts [--misses]
 *
 * It also reads `benchmark/privacy-languages.jsonl` (written for this project: secrets named in Russian,
 * Chinese, Japanese, Korean, German, French, Spanish and Portuguese, the evasions, and sentences that
 * only mention a password) and prints recall and false positives per language; and the shared corpus
 * once more in code mode (what code search redacts in repository files), credentials only.
 *
 * With TRIFORGE_BENCH_REPOS set (the code-search benchmark repositories), it also reads every file code
 * search indexes there in code mode, as the indexer does, and prints the throughput next to a plain scan.
 *
 * Corpus: ../shared/eval/privacy/{dev,test}.jsonl, `{text, secret, kind, secrets: [...]}` a line.
 * A positive counts as found when every listed secret substring is gone from the output; a negative
 * counts as a false positive when the output differs from the input at all.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { redactKeepingLines } from "../src/code/redact.ts";
import { walkRepository } from "../src/code/walk.ts";
import { redact } from "../src/privacy/index.ts";

const CORPUS = resolve(import.meta.dir, "../../shared/eval/privacy");
const LANGUAGES = resolve(import.meta.dir, "privacy-languages.jsonl");
/** Personal data: code mode keeps it on purpose (a repository file is on the user's disk already). */
const PERSONAL_KINDS = new Set([
  "home_path",
  "email",
  "ip_address",
  "iban",
  "phone",
  "credit_card",
  "us_ssn",
]);
const FILES = ["dev.jsonl", "test.jsonl"];
const showMisses = process.argv.includes("--misses");

interface Row {
  text: string;
  secret: boolean;
  kind: string;
  provider: string;
  secrets: string[];
}

/** The naive rule set the design started from: API_KEY=, Bearer, JWT, password=, *_TOKEN=, e-mail, home paths. */
const BASELINE_RULES: RegExp[] = [
  /API_KEY\s*=\s*\S+/gi,
  /Bearer\s+\S+/g,
  /eyJ[\w-]+\.[\w-]+\.[\w-]+/g,
  /password\s*=\s*\S+/gi,
  /\w*_TOKEN\s*=\s*\S+/gi,
  /[\w.+-]+@[\w-]+\.[\w.-]+/g,
  /\/(?:Users|home)\/[^/\s]+/g,
];

function baselineRedact(text: string): string {
  let out = text;
  for (const re of BASELINE_RULES) out = out.replace(re, "[REDACTED]");
  return out;
}

interface Score {
  positives: number;
  found: number;
  negatives: number;
  changed: number;
  byKind: Map<string, { n: number; found: number }>;
  byNegativeKind: Map<string, { n: number; changed: number }>;
}

function score(rows: Row[], redactFn: (text: string) => string, misses?: string[]): Score {
  const s: Score = {
    positives: 0,
    found: 0,
    negatives: 0,
    changed: 0,
    byKind: new Map(),
    byNegativeKind: new Map(),
  };
  for (const row of rows) {
    const out = redactFn(row.text);
    if (row.secret) {
      const ok = row.secrets.every((secret) => !out.includes(secret));
      s.positives++;
      if (ok) s.found++;
      const k = s.byKind.get(row.kind) ?? { n: 0, found: 0 };
      k.n++;
      if (ok) k.found++;
      s.byKind.set(row.kind, k);
      if (!ok)
        misses?.push(
          `MISS  ${row.kind}/${row.provider}: ${JSON.stringify(row.text.slice(0, 200))}\n   -> ${JSON.stringify(out.slice(0, 200))}`,
        );
    } else {
      const changed = out !== row.text;
      s.negatives++;
      if (changed) s.changed++;
      const k = s.byNegativeKind.get(row.kind) ?? { n: 0, changed: 0 };
      k.n++;
      if (changed) k.changed++;
      s.byNegativeKind.set(row.kind, k);
      if (changed) misses?.push(`FP    ${row.kind}: ${around(row.text, out)}`);
    }
  }
  return s;
}

/** The input around the first place the output differs from it, for the --misses listing. */
function around(input: string, output: string): string {
  let i = 0;
  while (i < input.length && input[i] === output[i]) i++;
  const from = Math.max(0, i - 80);
  return `${JSON.stringify(input.slice(from, i + 120))}\n   -> ${JSON.stringify(output.slice(from, i + 120))}`;
}

const pct = (a: number, b: number) => (b ? ((100 * a) / b).toFixed(1) : "-").padStart(5);

function report(file: string, rows: Row[]): void {
  const misses: string[] = [];
  const t0 = performance.now();
  const ours = score(rows, (t) => redact(t).text, misses);
  const ms = performance.now() - t0;
  const base = score(rows, baselineRedact);
  let notIdempotent = 0;
  let reviewNegatives = 0;
  let reviewPositives = 0;
  for (const row of rows) {
    const once = redact(row.text);
    if (redact(once.text).text !== once.text) notIdempotent++;
    if (once.review && row.secret) reviewPositives++;
    if (once.review && !row.secret) reviewNegatives++;
  }
  console.log(
    `\n== ${file}: ${ours.positives} positives, ${ours.negatives} negatives (${ms.toFixed(0)} ms for all rows)`,
  );
  console.log(
    `   triforge  recall ${pct(ours.found, ours.positives)}%   false positives ${pct(ours.changed, ours.negatives)}%`,
  );
  console.log(
    `   baseline  recall ${pct(base.found, base.positives)}%   false positives ${pct(base.changed, base.negatives)}%`,
  );
  console.log(
    `   idempotent: ${rows.length - notIdempotent}/${rows.length} rows give redact(redact(x)) == redact(x)`,
  );
  console.log(
    `   review flag set: ${pct(reviewPositives, ours.positives)}% of positives, ${pct(reviewNegatives, ours.negatives)}% of negatives`,
  );
  console.log("   recall by kind (triforge / baseline):");
  for (const [kind, k] of [...ours.byKind].sort((a, b) => b[1].n - a[1].n)) {
    const b = base.byKind.get(kind)!;
    console.log(
      `     ${kind.padEnd(22)} ${String(k.n).padStart(4)}  ${pct(k.found, k.n)}%  / ${pct(b.found, b.n)}%`,
    );
  }
  console.log("   false positives by kind (triforge / baseline):");
  for (const [kind, k] of [...ours.byNegativeKind].sort((a, b) => b[1].n - a[1].n)) {
    const b = base.byNegativeKind.get(kind)!;
    console.log(
      `     ${kind.padEnd(22)} ${String(k.n).padStart(4)}  ${pct(k.changed, k.n)}%  / ${pct(b.changed, b.n)}%`,
    );
  }
  if (showMisses) console.log(misses.join("\n"));
}

// --- adversarial timing -------------------------------------------------------------------------------

const MB = 1 << 20;
const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);

/** Inputs built to make a backtracking regex engine go quadratic: the list and its relatives. */
const ADVERSARIAL: [string, string][] = [
  ["runs without @", fill("abcdefghijklmnopqrstuvwxyz0123456789._%+-")],
  ["one @ after a long local part", `${fill("a").slice(1)}@`],
  ["dotted domain chain", `a@${fill("a.").slice(2)}`],
  ["nested quotes", fill(`"'\`"'\``)],
  ["long base64-ish run", fill("QmFzZTY0aXNoK2RhdGEvd2l0aG91dCBlbmQ=")],
  ["eyJ repeated", fill("eyJ.")],
  ["PEM BEGIN without END", fill("-----BEGIN RSA PRIVATE KEY-----\nMIIEow")],
  ["digits and separators", fill("1234-5678 ")],
  ["hex and colons", fill("fe80:")],
  ["scheme://user: without @", fill("https://user:")],
  ["home paths", fill("/Users/")],
  ["short token lines", fill("aB1cdefg\n")],
  ["spaced single letters", fill("a ")],
  ["zero-width every 3rd character", fill("ab\u200b")],
];

/**
 * Inputs that are nothing but the constructs the rules look at: every 8–26 bytes a trigger word with an
 * operator, or a secret. Their cost is per construct (no backtracking), so they measure throughput.
 */
const DENSE: [string, string][] = [
  ["password= repeated", fill("password=")],
  ["token: ' repeated", fill("token: '")],
  ["key=value pairs (40k secrets)", fill("api_key=a1B2c3D4e5F6g7H8 ")],
  [
    "prose with 24k secrets",
    fill("The deploy used ghp_0123456789abcdefghijABCDEFGHIJ012345 and mailed ops@example.com. "),
  ],
  ["Russian names, 38k", fill("Мой пароль: надёжный, ключ ")],
  ["Chinese names, 260k", fill("我的密码是很长的密钥令牌")],
  ["base64-wrapped keys, 36k", fill("QUtJQVozTVNKSzRRV0VSVFk3WFE= ")],
  ["a name and an unclosed 「, 130k", fill("パスワード：「")],
];

function medianMs(fn: () => void, runs = 5): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

function timeInputs(title: string, inputs: [string, string][]): number {
  console.log(`\n== ${title}`);
  let worst = 0;
  for (const [name, text] of inputs) {
    let sink = 0;
    const scan = medianMs(() => {
      for (let i = 0; i < text.length; i++) sink += text.charCodeAt(i);
    });
    const ms = medianMs(() => {
      sink += redact(text).text.length;
    });
    worst = Math.max(worst, ms);
    const ratio = `${(ms / scan).toFixed(0)}x`.padStart(6);
    console.log(
      `   ${name.padEnd(32)} ${ms.toFixed(1).padStart(7)} ms   plain scan ${scan.toFixed(2).padStart(5)} ms ${ratio}${sink < 0 ? "!" : ""}`,
    );
  }
  return worst;
}

function timing(): void {
  const worst = timeInputs(
    "1 MB adversarial inputs: redact() median of 5 runs, next to a plain text.length scan",
    ADVERSARIAL,
  );
  console.log(`   worst ${worst.toFixed(1)} ms (goal < 50 ms)`);
  const dense = timeInputs("1 MB dense inputs (throughput, not backtracking)", DENSE);
  console.log(`   worst ${dense.toFixed(1)} ms`);
}

// --- code mode throughput ------------------------------------------------------------------------------

/** Median CPU milliseconds (user + system) of `runs` calls: other processes on a shared box do not count. */
function medianCpuMs(fn: () => void, runs = 3): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage();
    fn();
    const used = process.cpuUsage(start);
    times.push((used.user + used.system) / 1000);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

/** Every file code search indexes in the benchmark repositories, as text. */
function benchmarkFiles(reposDir: string): string[] {
  const texts: string[] = [];
  for (const repo of readdirSync(reposDir)) {
    const root = join(reposDir, repo);
    if (!statSync(root).isDirectory()) continue;
    for (const file of walkRepository(root).files) {
      try {
        texts.push(readFileSync(join(root, file.path), "utf8"));
      } catch {
        // A file that vanished or cannot be read is not part of the figure.
      }
    }
  }
  return texts;
}

function codeThroughput(): void {
  const reposDir = process.env.TRIFORGE_BENCH_REPOS;
  if (!reposDir || !existsSync(reposDir)) {
    console.log(
      "\n== code mode: set TRIFORGE_BENCH_REPOS for the throughput over the benchmark repositories",
    );
    return;
  }
  const texts = benchmarkFiles(reposDir);
  const mb = texts.reduce((sum, t) => sum + t.length, 0) / 1e6;
  let sink = 0;
  const scan = medianCpuMs(() => {
    for (const t of texts) for (let i = 0; i < t.length; i++) sink += t.charCodeAt(i);
  });
  const code = medianCpuMs(() => {
    for (const t of texts) sink += redactKeepingLines(t).redactions;
  });
  const conversation = medianCpuMs(() => {
    for (const t of texts) sink += redact(t).findings.length;
  });
  const line = (name: string, ms: number) =>
    console.log(
      `   ${name.padEnd(34)} ${ms.toFixed(0).padStart(6)} ms  ${(mb / (ms / 1000)).toFixed(1).padStart(6)} MB/s  ${(ms / scan).toFixed(0).padStart(3)}x a plain scan${sink < 0 ? "!" : ""}`,
    );
  console.log(`\n== ${texts.length} benchmark-repository files, ${mb.toFixed(1)} MB: CPU time, median of 3`);
  line("code mode (redactKeepingLines)", code);
  line("conversation mode (redact)", conversation);
  line("plain text.length scan", scan);
}

const readRows = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row & { language?: string });

/** Recall and false positives per language of the hand-written corpus, next to the naive rules. */
function languages(): void {
  const rows = readRows(LANGUAGES);
  console.log(`\n== ${LANGUAGES.split("/").pop()}: ${rows.length} rows (triforge / baseline)`);
  console.log(
    `   ${"language".padEnd(10)} ${"pos".padStart(4)} ${"recall".padStart(16)} ${"neg".padStart(4)} ${"false pos.".padStart(16)}`,
  );
  const misses: string[] = [];
  for (const language of [...new Set(rows.map((r) => r.language ?? "?"))]) {
    const subset = rows.filter((r) => r.language === language);
    const ours = score(subset, (t) => redact(t).text, misses);
    const base = score(subset, baselineRedact);
    console.log(
      `   ${language.padEnd(10)} ${String(ours.positives).padStart(4)} ${pct(ours.found, ours.positives)}% / ${pct(base.found, base.positives)}% ${String(ours.negatives).padStart(4)} ${pct(ours.changed, ours.negatives)}% / ${pct(base.changed, base.negatives)}%`,
    );
  }
  const all = score(rows, (t) => redact(t).text);
  const idempotent = rows.filter((r) => {
    const once = redact(r.text).text;
    return redact(once).text === once;
  }).length;
  console.log(
    `   all        ${String(all.positives).padStart(4)} ${pct(all.found, all.positives)}%          ${String(all.negatives).padStart(4)} ${pct(all.changed, all.negatives)}%`,
  );
  console.log(`   idempotent: ${idempotent}/${rows.length} rows`);
  if (showMisses) console.log(misses.join("\n"));
}

/** The shared corpus in code mode, personal data left out: the credentials code search still redacts. */
function codeMode(): void {
  const rows = FILES.flatMap((file) => readRows(resolve(CORPUS, file))).filter(
    (r) => !r.secret || !PERSONAL_KINDS.has(r.kind),
  );
  const code = score(rows, (t) => redact(t, { mode: "code" }).text);
  const conversation = score(rows, (t) => redact(t).text);
  console.log(
    `\n== dev + test in code mode, credential rows only (${code.positives} positives, ${code.negatives} negatives)`,
  );
  console.log(
    `   code mode          recall ${pct(code.found, code.positives)}%   false positives ${pct(code.changed, code.negatives)}%`,
  );
  console.log(
    `   conversation mode  recall ${pct(conversation.found, conversation.positives)}%   false positives ${pct(conversation.changed, conversation.negatives)}%   (same rows)`,
  );
}

for (const file of FILES) report(file, readRows(resolve(CORPUS, file)));
languages();
codeMode();
timing();
codeThroughput();
