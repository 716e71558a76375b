#!/usr/bin/env bun
/**
 * Memory at scale: how indexing and recall costs grow with a project's store. LoCoMo's text repeated
 * 1×, 4×, 16× into ONE project (each copy its own sessions), and a synthetic large-vocabulary store (every
 * session brings new identifiers, as pasted logs and code do). At each size: a full index from scratch,
 * the incremental index of one new session, a fresh `triforge recall` (the compiled binary, a new process
 * each time: what the first rag_search of every session pays), warm recall p50/p95 in one process and warm
 * `rag_search` over MCP from the compiled binary's server (recall plus the checks of its hits), peak
 * RSS and the files' sizes. Baselines in the same run: an empty Bun binary's start (compiled with the same
 * flags) and the 1× figures. Indexing and fresh recall run the compiled binary.
 *
 * Usage: bun benchmark/memory-scale.ts [--sizes 1,4,16] [--synthetic 20000] [--runs 10] [--json] [--keep]
 * (`--sizes 0`: the synthetic store alone; `--keep`: the stores stay, their folder is printed, to measure
 * more one-session runs on them without indexing again. TRIFORGE_TEST_BINARY=dist/triforge reuses a
 * built binary instead of building one.)
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { buildTarget, hostTarget } from "../build/build.ts";
import { resolveModelDir } from "../src/embed/source.ts";
import { chatLogPath, recallSnapshotPath, snapshotAdditionsPath, storePath } from "../src/home/paths.ts";
import type { ChatRecord } from "../src/memory/chatlog.ts";
import { closeWarmIndexes, recall } from "../src/memory/recall/recall.ts";
import { buildEmptyBinary } from "./baseline.ts";
import { loadLocomo, locomoRecords, percentiles, scratchHome, writeChatLog } from "./memory-data.ts";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1,4,16" },
    synthetic: { type: "string", default: "20000" },
    runs: { type: "string", default: "10" },
    json: { type: "boolean" },
    keep: { type: "boolean" },
  },
});
const sizes = String(values.sizes)
  .split(",")
  .map(Number)
  .filter((n) => n > 0);
const syntheticRecords = Number(values.synthetic);
const freshRuns = Math.max(3, Number(values.runs));
const WARM_QUERIES = 100;
const GOALS = { freshRatio: 25, warmHybridMs: 20, incrementalSeconds: 1 };

const work = mkdtempSync(join(tmpdir(), "triforge-bench-scale-"));
const scratch = scratchHome("scale");
process.on("exit", () => {
  rmSync(work, { recursive: true, force: true });
  if (values.keep)
    console.error(`stores kept in ${scratch.home} (TRIFORGE_HOME=${process.env.TRIFORGE_HOME})`);
  else scratch.cleanup();
});

const [empty, triforge] = await Promise.all([
  buildEmptyBinary(work),
  process.env.TRIFORGE_TEST_BINARY ?? buildTarget(hostTarget(), work, resolveModelDir()),
]);
const env = { ...process.env, TRIFORGE_HOME: process.env.TRIFORGE_HOME as string };

function run(argv: string[]): { ms: number; cpuMs: number; rssMB: number; stdout: string } {
  const started = performance.now();
  const proc = Bun.spawnSync(argv, { env, stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - started;
  if (proc.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${proc.exitCode}: ${proc.stderr}`);
  return {
    ms,
    // CPU time as well as wall time: on a shared box the wall clock also measures the neighbours.
    cpuMs: Number(proc.resourceUsage?.cpuTime.total ?? 0) / 1000,
    rssMB: Math.round((proc.resourceUsage?.maxRSS ?? 0) / 1e6),
    stdout: proc.stdout.toString(),
  };
}

const fileMB = (path: string, suffixes = [""]) =>
  Number(
    (
      suffixes.reduce((sum, s) => {
        try {
          return sum + statSync(path + s).size;
        } catch {
          return sum;
        }
      }, 0) / 1e6
    ).toFixed(1),
  );

/** LoCoMo's records `times` over, each copy its own sessions and uuids. */
function repeated(base: ChatRecord[], times: number): ChatRecord[] {
  const out: ChatRecord[] = [];
  for (let k = 0; k < times; k++)
    for (const r of base) out.push({ ...r, session_id: `${r.session_id}-x${k}`, uuid: `${r.uuid}-x${k}` });
  return out;
}

/**
 * Synthetic sessions with a growing vocabulary: each turn mixes everyday words with identifiers, paths
 * and error codes drawn from a pool that grows with the record count (a fixed-seed generator).
 */
function synthetic(count: number, words: string[]): ChatRecord[] {
  let seed = 20260101;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)];
  const records: ChatRecord[] = [];
  for (let i = 0; i < count; i++) {
    const pool = Math.max(1000, i * 2);
    const parts: string[] = [];
    for (let w = 0; w < 24; w++) {
      const r = next();
      if (r < 0.6) parts.push(pick(words));
      else if (r < 0.8) parts.push(`${pick(words)}_${Math.floor(next() * pool).toString(36)}`);
      else if (r < 0.9) parts.push(`src/${pick(words)}/${Math.floor(next() * pool).toString(36)}.ts`);
      else parts.push(`E${Math.floor(next() * pool)}`);
    }
    records.push({
      ts: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString(),
      session_id: `synthetic-${Math.floor(i / 40)}`,
      role: i % 2 === 0 ? "user" : "assistant",
      text: `${parts.join(" ")}.`,
      uuid: `synthetic-${i}`,
    });
  }
  return records;
}

interface Row {
  store: string;
  turns: number;
  indexSeconds: number;
  indexCpuSeconds: number;
  indexRssMB: number;
  incrementalSeconds: number;
  incrementalCpuSeconds: number;
  /** Phases of each run (`triforge index --timings`, ms). */
  indexPhasesMs: Record<string, number>;
  incrementalPhasesMs: Record<string, number>;
  /** Peak RSS within each phase (the child's own VmHWM, reset at each phase start; MB). */
  indexPhasePeakMB: Record<string, number>;
  incrementalPhasePeakMB: Record<string, number>;
  /** The 1-minute load average when the row was measured: wall times on a shared box follow it. */
  load: number;
  freshRecallMs: { p50: number; p95: number };
  freshRecallCpuMs: number;
  freshBm25Ms: number;
  freshRecallRssMB: number;
  freshRatio: number;
  freshCpuRatio: number;
  warmHybridMs: { p50: number; p95: number };
  warmBm25Ms: { p50: number; p95: number };
  /** What an agent waits for: `rag_search` over MCP from the compiled binary's server (recall and the hits' checks), after its first call. */
  warmRagSearchMs: { p50: number; p95: number };
  storeMB: number;
  snapshotMB: number;
}

const median = (values: number[]) => percentiles(values).p50;

function loadAverage(): number {
  try {
    return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
  } catch {
    return Number.NaN;
  }
}

/** `rag_search` (hybrid, top 5) WARM_QUERIES times over MCP, the server the compiled binary's: p50/p95 after the first call. */
async function warmRagSearch(root: string, questions: string[]): Promise<{ p50: number; p95: number }> {
  const client = new Client({ name: "memory-scale", version: "0" }, { capabilities: {} });
  await client.connect(
    new StdioClientTransport({
      command: triforge,
      args: ["serve"],
      cwd: root,
      env: env as Record<string, string>,
      stderr: "ignore",
    }),
  );
  try {
    const times: number[] = [];
    for (let q = 0; q <= WARM_QUERIES; q++) {
      const started = performance.now();
      await client.callTool(
        { name: "rag_search", arguments: { query: questions[q % questions.length], top_k: 5 } },
        CallToolResultSchema,
      );
      if (q > 0) times.push(performance.now() - started);
    }
    const { p50, p95 } = percentiles(times);
    return { p50: Number(p50.toFixed(1)), p95: Number(p95.toFixed(1)) };
  } finally {
    await client.close();
  }
}

async function measure(name: string, records: ChatRecord[], questions: string[]): Promise<Row> {
  const root = scratch.project(name);
  const chatLog = chatLogPath(root);
  // The last session is held back: the incremental run indexes it alone.
  const lastSession = records[records.length - 1].session_id;
  writeChatLog(
    chatLog,
    records.filter((r) => r.session_id !== lastSession),
  );
  const index = () => run([triforge, "index", `--project=${root}`, "--timings"]);
  const phasesOf = (stdout: string) => JSON.parse(/^Phases \(ms\): (.*)$/m.exec(stdout)?.[1] ?? "{}");
  const peaksOf = (stdout: string): Record<string, number> =>
    JSON.parse(/^Phase peak RSS \(MB\): (.*)$/m.exec(stdout)?.[1] ?? "{}");
  // The child resets its peak at each phase, so the run's peak is the highest phase's (maxRSS where the
  // system reports no phases).
  const peakOf = (stdout: string, fallback: number) =>
    Math.max(0, ...Object.values(peaksOf(stdout))) || fallback;
  const full = index();
  const held = records.filter((r) => r.session_id === lastSession);
  appendFileSync(chatLog, `${held.map((r) => JSON.stringify(r)).join("\n")}\n`);
  const incremental = index();
  const fresh: { ms: number; cpuMs: number }[] = [];
  const freshBm25: number[] = [];
  const baseline: { ms: number; cpuMs: number }[] = [];
  let freshRss = 0;
  for (let i = 0; i < freshRuns; i++) {
    baseline.push(run([empty]));
    const question = questions[i % questions.length];
    const r = run([triforge, "recall", question, `--project=${root}`, "--json"]);
    fresh.push(r);
    freshRss = Math.max(freshRss, r.rssMB);
    freshBm25.push(run([triforge, "recall", question, `--project=${root}`, "--mode", "bm25", "--json"]).ms);
  }
  const warm = async (mode: "hybrid" | "bm25") => {
    const times: number[] = [];
    await recall(root, questions[0], { mode });
    for (let q = 0; q < WARM_QUERIES; q++) {
      const started = performance.now();
      await recall(root, questions[q % questions.length], { mode, topK: 5 });
      times.push(performance.now() - started);
    }
    const { p50, p95 } = percentiles(times);
    return { p50: Number(p50.toFixed(1)), p95: Number(p95.toFixed(1)) };
  };
  const warmHybridMs = await warm("hybrid");
  const warmBm25Ms = await warm("bm25");
  closeWarmIndexes();
  const warmRagSearchMs = await warmRagSearch(root, questions);
  const freshP = percentiles(fresh.map((f) => f.ms));
  const round1 = (n: number) => Number(n.toFixed(1));
  return {
    store: name,
    turns: records.length,
    indexSeconds: Number((full.ms / 1000).toFixed(2)),
    indexCpuSeconds: Number((full.cpuMs / 1000).toFixed(2)),
    indexRssMB: peakOf(full.stdout, full.rssMB),
    incrementalSeconds: Number((incremental.ms / 1000).toFixed(2)),
    incrementalCpuSeconds: Number((incremental.cpuMs / 1000).toFixed(2)),
    indexPhasesMs: phasesOf(full.stdout),
    incrementalPhasesMs: phasesOf(incremental.stdout),
    indexPhasePeakMB: peaksOf(full.stdout),
    incrementalPhasePeakMB: peaksOf(incremental.stdout),
    load: loadAverage(),
    freshRecallMs: { p50: round1(freshP.p50), p95: round1(freshP.p95) },
    freshRecallCpuMs: round1(median(fresh.map((f) => f.cpuMs))),
    freshBm25Ms: round1(median(freshBm25)),
    freshRecallRssMB: freshRss,
    freshRatio: round1(freshP.p50 / median(baseline.map((b) => b.ms))),
    freshCpuRatio: round1(median(fresh.map((f) => f.cpuMs)) / median(baseline.map((b) => b.cpuMs))),
    warmHybridMs,
    warmBm25Ms,
    warmRagSearchMs,
    storeMB: fileMB(storePath(root), ["", "-wal"]),
    snapshotMB: fileMB(recallSnapshotPath(root)) + fileMB(snapshotAdditionsPath(recallSnapshotPath(root))),
  };
}

const samples = await loadLocomo();
const base = samples.flatMap(locomoRecords);
const questions = samples.flatMap((s) => s.qa.map((q) => q.question));
const emptyStart = median(Array.from({ length: 20 }, () => run([empty]).ms));
if (!values.json)
  console.log(
    `memory at scale (${hostTarget()}, bun ${Bun.version}); empty Bun binary start p50 ${emptyStart.toFixed(1)} ms`,
  );
const rows: Row[] = [];
/** Each row is printed as soon as it is measured: the big sizes take minutes. */
function report(r: Row): void {
  rows.push(r);
  if (values.json) return;
  const one = rows[0];
  const grow = (a: number, b: number) => (b > 0 ? ` (${(a / b).toFixed(1)}× 1×)` : "");
  console.log(
    `${r.store.padEnd(18)} ${String(r.turns).padStart(7)} turns | index ${r.indexSeconds} s (cpu ${r.indexCpuSeconds} s)${grow(r.indexCpuSeconds, one.indexCpuSeconds)}, ${r.indexRssMB} MB RSS | one new session ${r.incrementalSeconds} s (cpu ${r.incrementalCpuSeconds} s) | fresh recall p50 ${r.freshRecallMs.p50} ms / p95 ${r.freshRecallMs.p95} ms = ${r.freshRatio}× empty binary (cpu ${r.freshRecallCpuMs} ms = ${r.freshCpuRatio}×), bm25 ${r.freshBm25Ms} ms, ${r.freshRecallRssMB} MB RSS | warm hybrid p50 ${r.warmHybridMs.p50} / p95 ${r.warmHybridMs.p95} ms, bm25 ${r.warmBm25Ms.p50} ms, rag_search over MCP p50 ${r.warmRagSearchMs.p50} / p95 ${r.warmRagSearchMs.p95} ms | store ${r.storeMB} MB + snapshot ${r.snapshotMB} MB`,
  );
  console.log(`${"".padEnd(26)} load average ${r.load}`);
  console.log(`${"".padEnd(26)} phases (ms) of the full index: ${JSON.stringify(r.indexPhasesMs)}`);
  console.log(`${"".padEnd(26)} peak RSS by phase (MB): ${JSON.stringify(r.indexPhasePeakMB)}`);
  console.log(`${"".padEnd(26)} of the one new session: ${JSON.stringify(r.incrementalPhasesMs)}`);
  console.log(`${"".padEnd(26)} peak RSS by phase (MB): ${JSON.stringify(r.incrementalPhasePeakMB)}`);
}
for (const size of sizes) report(await measure(`locomo-${size}x`, repeated(base, size), questions));
if (syntheticRecords > 0) {
  const words = [...new Set(base.flatMap((r) => r.text.toLowerCase().match(/[a-z]{4,}/g) ?? []))];
  const records = synthetic(syntheticRecords, words);
  report(
    await measure(
      `synthetic-${syntheticRecords}`,
      records,
      records.slice(0, 200).map((r) => r.text.split(" ").slice(0, 6).join(" ")),
    ),
  );
}

if (values.json) console.log(JSON.stringify({ emptyBinaryMs: emptyStart, rows }, null, 2));
else {
  const worst = (f: (r: Row) => number) => Math.max(...rows.map(f));
  console.log(
    `goals: fresh recall ≤ ${GOALS.freshRatio}× empty binary (worst ${worst((r) => r.freshRatio)}×), warm hybrid rag_search p50 ≤ ${GOALS.warmHybridMs} ms (worst ${worst((r) => r.warmRagSearchMs.p50)} over MCP, ${worst((r) => r.warmHybridMs.p50)} for recall alone), one new session ≤ ${GOALS.incrementalSeconds} s (worst ${worst((r) => r.incrementalSeconds)})`,
  );
}
