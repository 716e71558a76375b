#!/usr/bin/env bun
/**
 * Start-up cost of the triforge binary next to an empty Bun program compiled with the same flags, in
 * the same run: `bun run benchmark/startup.ts [--runs 50]`.
 *
 * Hooks start the binary many times a day, so a hook invocation must cost about as much as starting
 * an empty Bun binary. Measured: `triforge --version`, a hook-shaped no-op (the Stop hook's `capture`
 * on a project that is not active, hook JSON on stdin) and the SessionStart `prelude` of an active
 * project. Runs are interleaved so that drift in the machine's load hits all cases alike.
 * Goal: p50 ratio to the empty binary <= 1.5.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildTarget, hostTarget } from "../build/build.ts";
import { resolveModelDir } from "../src/embed/source.ts";
import { projectKey } from "../src/home/paths.ts";
import { buildEmptyBinary } from "./baseline.ts";

const GOAL_RATIO = 1.5;
/** Enough runs for a stable p95 on a noisy 2-core machine, still well under a minute. */
const DEFAULT_RUNS = 50;
const WARMUP_RUNS = 3;

const { values } = parseArgs({ options: { runs: { type: "string" } } });
const runs = Math.max(30, Number(values.runs ?? DEFAULT_RUNS));

const work = mkdtempSync(join(tmpdir(), "triforge-bench-startup-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));

const home = join(work, "home");
const inactiveProject = join(work, "project");
mkdirSync(inactiveProject, { recursive: true });
const env = {
  ...process.env,
  HOME: home,
  USERPROFILE: home,
  TRIFORGE_HOME: join(home, ".claude", "triforge"),
};

const [empty, triforge] = await Promise.all([
  buildEmptyBinary(work),
  buildTarget(hostTarget(), work, resolveModelDir()),
]);

const hookInput = JSON.stringify({
  session_id: "bench",
  transcript_path: join(inactiveProject, "transcript.jsonl"),
  cwd: inactiveProject,
  hook_event_name: "Stop",
  stop_hook_active: false,
});

// An active project whose memory holds three summary entries: what the SessionStart prelude prints.
const activeProject = join(work, "active");
mkdirSync(join(activeProject, ".triforge"), { recursive: true });
writeFileSync(
  join(activeProject, ".triforge", "config.json"),
  '{"storage":"local","llm":"auto","exclude":[]}\n',
);
const activeData = join(env.TRIFORGE_HOME, projectKey(activeProject));
mkdirSync(activeData, { recursive: true });
writeFileSync(
  join(activeData, "summary.md"),
  [1, 2, 3]
    .map(
      (i) =>
        `## 2026-11-0${i} · session s${i}\n\nDiscussed: the store layout. Decided: keep SQLite per project. Files: src/store/sqlite.ts\n`,
    )
    .join("\n"),
);

interface Case {
  name: string;
  argv: string[];
  stdin?: string;
}
const cases: Case[] = [
  { name: "empty Bun binary (baseline)", argv: [empty] },
  { name: "triforge --version", argv: [triforge, "--version"] },
  {
    name: "triforge capture (inactive project, hook JSON on stdin)",
    argv: [triforge, "capture", `--project=${inactiveProject}`],
    stdin: hookInput,
  },
  {
    name: "triforge prelude (active project, 3 summary entries)",
    argv: [triforge, "prelude", `--project=${activeProject}`],
    stdin: hookInput,
  },
];

function once(c: Case): number {
  const started = performance.now();
  const proc = Bun.spawnSync(c.argv, {
    env,
    cwd: inactiveProject,
    stdin: c.stdin === undefined ? "ignore" : new TextEncoder().encode(c.stdin),
    stdout: "ignore",
    stderr: "pipe",
  });
  const elapsed = performance.now() - started;
  if (proc.exitCode !== 0)
    throw new Error(`${c.argv.join(" ")} exited ${proc.exitCode}: ${proc.stderr.toString()}`);
  return elapsed;
}

const samples = cases.map(() => [] as number[]);
for (let i = 0; i < WARMUP_RUNS; i++) for (const c of cases) once(c);
for (let i = 0; i < runs; i++) for (const [k, c] of cases.entries()) samples[k].push(once(c));

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const stats = samples.map((s) => {
  const sorted = [...s].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
});

console.log(
  `startup, ${runs} runs each after ${WARMUP_RUNS} warm-up runs (${hostTarget()}, bun ${Bun.version})`,
);
console.log(
  `${"".padEnd(62)}${"p50 ms".padStart(9)}${"p95 ms".padStart(9)}${"ratio p50".padStart(11)}${"ratio p95".padStart(11)}`,
);
cases.forEach((c, k) => {
  const r50 = stats[k].p50 / stats[0].p50;
  const r95 = stats[k].p95 / stats[0].p95;
  console.log(
    `${c.name.padEnd(62)}${stats[k].p50.toFixed(1).padStart(9)}${stats[k].p95.toFixed(1).padStart(9)}${r50.toFixed(2).padStart(11)}${r95.toFixed(2).padStart(11)}`,
  );
});
const worst = Math.max(...stats.slice(1).map((s) => s.p50 / stats[0].p50));
console.log(
  `goal: p50 ratio <= ${GOAL_RATIO}: ${worst <= GOAL_RATIO ? "met" : "MISSED"} (worst ${worst.toFixed(2)})`,
);
