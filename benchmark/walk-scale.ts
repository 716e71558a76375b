#!/usr/bin/env bun
/**
 * Code search on a huge tree: what one index of 100,000 files costs, and how a search of a home
 * folder or of `/` is answered.
 *
 *   bun benchmark/walk-scale.ts [--files 100000] [--keep]
 *
 * Generates a project of `--files` files (package.json and small sources, 100 to a folder, 0.2–1 KB each, seeded, so
 * every run writes the same tree) under a temporary folder, then runs the compiled binary
 * (TRIFORGE_TEST_BINARY, else dist/triforge from `bun run build:host`) with a scratch HOME:
 *
 * 1. `code-index` of the project, cold: wall time, peak RSS, what the report says (caps hit);
 * 2. `search` of the fake HOME holding the tree, and of `/`: the refusal's wall time and RSS;
 * 3. `search --allow-large` of the fake HOME: a bounded answer (the caps), wall time and RSS.
 *
 * Baselines in the same run: one `find` walk of the tree (no reading), and the peak RSS of
 * `triforge --version` (the binary doing nothing). Peak RSS is GNU time's maximum resident set size
 * where /usr/bin/time exists, else the kernel's high-water mark (VmHWM) sampled every 20 ms. The
 * tree is removed afterwards unless --keep.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { seededRandom } from "../test/support/random.ts";

const { values } = parseArgs({
  options: { files: { type: "string", default: "100000" }, keep: { type: "boolean" } },
});
const fileCount = Number(values.files);
if (!Number.isInteger(fileCount) || fileCount < 100 || fileCount > 500_000) {
  console.error("--files must be a whole number from 100 to 500000");
  process.exit(2);
}

const scratch = join(tmpdir(), `triforge-walk-scale-${process.pid}`);
const home = join(scratch, "home");
const project = join(home, "big-project");
const WORDS =
  "parse render queue retry token buffer socket config cache index shard merge flush commit".split(" ");

/** A deterministic tree: folders of 100 files, each a few small functions in TypeScript or Python. */
function generate(): number {
  const random = seededRandom(12);
  const pick = () => WORDS[Math.floor(random() * WORDS.length)];
  let bytes = 0;
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "package.json"), '{"name":"big-project"}\n');
  // With package.json, the project holds exactly `fileCount` files.
  for (let f = 0; f < fileCount - 1; f++) {
    const dir = join(project, `pkg${Math.floor(f / 10_000)}`, `mod${Math.floor(f / 100) % 100}`);
    if (f % 100 === 0) mkdirSync(dir, { recursive: true });
    const python = f % 3 === 0;
    const functions = 2 + Math.floor(random() * 4);
    let text = "";
    for (let i = 0; i < functions; i++) {
      const name = `${pick()}_${pick()}_${f}_${i}`;
      text += python
        ? `def ${name}(value, limit=${i}):\n    """${pick()} the ${pick()} before the ${pick()}."""\n    if value > limit:\n        return ${pick()}_step(value - limit)\n    return value\n\n`
        : `export function ${name}(value: number, limit = ${i}): number {\n  // ${pick()} the ${pick()} before the ${pick()}\n  if (value > limit) return ${pick()}Step(value - limit);\n  return value;\n}\n\n`;
    }
    writeFileSync(join(dir, `file${f}.${python ? "py" : "ts"}`), text);
    bytes += text.length;
  }
  return bytes;
}

interface Run {
  code: number;
  wallMs: number;
  peakRssMb: number;
  stdout: string;
  stderr: string;
}

const GNU_TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

/** Runs the binary to its end with its peak RSS (GNU time, else VmHWM sampled from /proc). */
async function measure(args: string[], options: { cwd?: string } = {}): Promise<Run> {
  const started = performance.now();
  const rssFile = join(scratch, "rss.txt");
  const command = GNU_TIME ? [GNU_TIME, "-f", "%M", "-o", rssFile, binary, ...args] : [binary, ...args];
  const proc = Bun.spawn(command, {
    cwd: options.cwd ?? home,
    env: { HOME: home, TRIFORGE_HOME: join(home, ".claude", "triforge"), PATH: process.env.PATH ?? "" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let peakKb = 0;
  const sample = () => {
    try {
      const status = readFileSync(`/proc/${proc.pid}/status`, "utf8");
      peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
    } catch {
      // The process has exited.
    }
  };
  const timer = setInterval(sample, 20);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearInterval(timer);
  if (GNU_TIME) peakKb = Number(readFileSync(rssFile, "utf8").trim().split("\n").pop());
  return { code, wallMs: performance.now() - started, peakRssMb: peakKb / 1024, stdout, stderr };
}

const binary = process.env.TRIFORGE_TEST_BINARY ?? resolve(import.meta.dir, "../dist/triforge");
if (!existsSync(binary)) {
  console.error(`no binary at ${binary}: run 'bun run build:host' first (or set TRIFORGE_TEST_BINARY)`);
  process.exit(2);
}
try {
  const generatedAt = performance.now();
  const bytes = generate();
  console.log(
    `generated ${fileCount.toLocaleString()} files, ${(bytes / 1e6).toFixed(1)} MB, in ${((performance.now() - generatedAt) / 1000).toFixed(1)} s under ${project}`,
  );

  const findStarted = performance.now();
  const found = Bun.spawnSync(["find", project, "-type", "f"], { stdout: "pipe" });
  const findMs = performance.now() - findStarted;
  const idle = await measure(["--version"]);
  console.log(
    `baselines: find over the tree ${findMs.toFixed(0)} ms (${found.stdout.toString().split("\n").length - 1} files); triforge --version peak RSS ${idle.peakRssMb.toFixed(0)} MB`,
  );

  const row = (what: string, run: Run, note: string) =>
    console.log(
      `${what.padEnd(34)} exit ${run.code}  ${(run.wallMs / 1000).toFixed(2).padStart(6)} s (${(run.wallMs / findMs).toFixed(0)}× find)  peak RSS ${run.peakRssMb.toFixed(0).padStart(5)} MB (${(run.peakRssMb / idle.peakRssMb).toFixed(1)}× --version)  ${note}`,
    );
  const index = await measure(["code-index", project, "--json"]);
  let summary = index.stderr.trim().split("\n").pop() ?? "";
  try {
    const report = JSON.parse(index.stdout);
    summary = `${report.files} files, ${report.chunks} chunks${report.capped ? `; stopped at the ${report.capped.name} cap (${report.capped.limit})` : ""}`;
  } catch {
    // Not JSON: the error line says why.
  }
  row("code-index of the project (cold)", index, summary);
  const warm = await measure(["search", "retry the token queue", project, "--json"]);
  row(
    "search of the project (warm index)",
    warm,
    `${JSON.parse(warm.stdout || "{}").hits?.length ?? 0} hits`,
  );
  const lastLine = (run: Run) => run.stderr.trim().split("\n").pop()?.slice(0, 110) ?? "";
  const homeRun = await measure(["search", "retry", home]);
  row("search of the fake HOME", homeRun, lastLine(homeRun));
  const rootRun = await measure(["search", "retry", "/"]);
  row("search of /", rootRun, lastLine(rootRun));
  const large = await measure(["search", "retry the token queue", home, "--allow-large", "--json"]);
  let note = lastLine(large);
  try {
    const result = JSON.parse(large.stdout);
    note = `${result.hits.length} hits; ${result.note ?? "no note"}`.slice(0, 160);
  } catch {
    // The error line says why.
  }
  row("search of the fake HOME --allow-large", large, note);
} finally {
  if (!values.keep) rmSync(scratch, { recursive: true, force: true });
}
