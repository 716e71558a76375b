#!/usr/bin/env bun
/**
 * The HTTP RAG service under bounded load on 127.0.0.1, and how a query's cost grows with the index.
 *
 * 1. Load: `triforge serve --http` (a separate process) over a generated workspace of 10,000 files;
 *    50 concurrent clients send 20,000 `POST /v1/query` in all (distinct queries, so no answer is reused),
 *    then the same load of `GET /health`, the baseline in the same run: latency p50/p99, throughput,
 *    errors, and the server's RSS (with its query workers') before and after. Once per `--workers`
 *    count (default 0 and the machine's cores), each its own server. Goal: p99 ≤ 50 ms for code queries.
 * 2. Growth: one code query over indexes of ~1k, ~10k and ~100k chunks (generated the same way), next to
 *    the linear scan claw-rag-service runs per query (cosine against every stored vector; 1,536
 *    dimensions, its default text-embedding-3-small), timed in the same process and run.
 *
 *    Both are timed in wall time and in this thread's CPU time (benchmark/cpu-clock.ts), which the
 *    neighbours of a shared machine disturb less; the queries are the first of a loaded index, caches
 *    cold, as a server's are.
 *
 *    Besides latency, the CPU time every process spends per answer: the server's and its query worker
 *    processes' (/proc user + system time over the load), and this client's; unlike the latency it hardly
 *    depends on what else the machine runs, and it bounds the throughput: cores / CPU per answer.
 *
 * Usage: bun benchmark/http.ts [--files 10000] [--requests 20000] [--clients 50] [--workers 0,2|none]
 *   [--baseline DIR] [--rounds 1] [--no-growth] [--json]
 * `--baseline DIR`: an earlier tree (`git worktree add DIR <commit>`, node_modules linked): its server
 * runs the same loads over the same index, alternating with this tree's, `--rounds` times.
 * The workspaces are generated under /tmp and removed at the end.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openIndex, searchLoaded } from "../src/code/code-search.ts";
import { resolveModelDir } from "../src/embed/source.ts";
import { ingestWorkspace } from "../src/rag/service.ts";
import { seededRandom } from "../test/support/random.ts";
import { threadCpuClock } from "./cpu-clock.ts";
import { workspaceGenerator } from "./generated-workspace.ts";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const FILES = option("files", 10_000);
const REQUESTS = option("requests", 20_000);
const CLIENTS = option("clients", 50);
const WORKER_COUNTS = (() => {
  const at = args.indexOf("--workers");
  if (at >= 0 && args[at + 1] === "none") return [];
  return at >= 0 ? args[at + 1].split(",").map(Number) : [0, availableParallelism()];
})();
const BASELINE = (() => {
  const at = args.indexOf("--baseline");
  return at >= 0 ? resolve(args[at + 1]) : undefined;
})();
const ROUNDS = option("rounds", 1);
/** The trees whose servers are loaded: this one, and the baseline's in alternating order. */
const TREES: { name: string; dir: string }[] = [
  ...(BASELINE ? [{ name: "baseline", dir: BASELINE }] : []),
  { name: "this tree", dir: resolve(import.meta.dir, "..") },
];
/** claw-rag-service's default embedding model (text-embedding-3-small) has 1,536 dimensions. */
const CLAW_DIM = 1536;
const GROWTH_QUERIES = 200;
/** Workspaces of ~1k, ~10k and ~100k chunks (ten generated functions a file). */
const GROWTH_FILES = [100, 1_000, 10_000];

const scratch = mkdtempSync(join(tmpdir(), "triforge-bench-http-"));
process.env.TRIFORGE_HOME = join(scratch, "data");
const catalogPath = join(scratch, "catalog.db");

const generator = workspaceGenerator(14);
const cpu = threadCpuClock() ?? (() => performance.now());
/** The stand-in vectors of the linear scan (random: only its cost is measured). */
const random = seededRandom(15);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
  return line ? Number(line[1]) / 1024 : Number.NaN;
}

/** The server and its child processes (its query workers). */
function processTree(pid: number): number[] {
  const children = Bun.spawnSync(["ps", "-o", "pid=", "--ppid", String(pid)])
    .stdout.toString()
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  return [pid, ...children];
}

/** The server's RSS and its children's, in MB. */
function treeRssMb(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + rssMb(p), 0);
}

/** User + system CPU ms of the server and its children, by process id (/proc/PID/stat, clock ticks). */
function treeCpuMs(pid: number): Map<number, number> {
  const ticks = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString()) || 100;
  const out = new Map<number, number>();
  for (const p of processTree(pid)) {
    const stat = readFileSync(`/proc/${p}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of stat (utime, stime), counted from the state, field 3.
    out.set(p, ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks);
  }
  return out;
}

/** CPU ms spent between two treeCpuMs readings (processes in both). */
function cpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [p, ms] of after) if (before.has(p)) sum += ms - before.get(p)!;
  return sum;
}

interface LoadResult {
  requests: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
  perSecond: number;
}

interface LoadRun {
  tree: string;
  round: number;
  workers: number;
  health: LoadResult;
  query: LoadResult;
  /** CPU ms per answer: the server's processes (`queryMain`: the server process alone), and this client. */
  cpu: { health: number; query: number; queryMain: number; clientHealth: number; clientQuery: number };
  rssMb: { before: number; after: number };
}

/** CLIENTS workers sending `total` requests in all, each waiting for its answer before the next. */
async function load(total: number, send: (i: number) => Promise<Response>): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        try {
          const res = await send(i);
          await res.arrayBuffer();
          if (res.status !== 200) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: total,
    errors,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies.at(-1)!,
    perSecond: total / seconds,
  };
}

async function startServer(
  tree: string,
  workspace: string,
  workers: number,
): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const proc = Bun.spawn(
    [
      process.execPath,
      join(tree, "src/index.ts"),
      "serve",
      "--http",
      "--port",
      "0",
      "--workspace",
      workspace,
      "--db",
      catalogPath,
      "--workers",
      String(workers),
    ],
    {
      // The same model for every tree (a worktree elsewhere would not find this one's).
      env: { ...process.env, TRIFORGE_MODEL_DIR: resolveModelDir() },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    },
  );
  const reader = proc.stderr.getReader();
  let text = "";
  while (!/listening on (http:\/\/\S+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve --http exited: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    url: /listening on (http:\/\/\S+)/.exec(text)![1],
    pid: proc.pid,
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** claw-rag-service's query: cosine of the query against every stored vector, then the top k. */
function linearScan(vectors: Float32Array, count: number, query: Float32Array, topK: number): number[] {
  const scores = new Float32Array(count);
  for (let r = 0; r < count; r++) {
    let dot = 0;
    let norm = 0;
    const base = r * CLAW_DIM;
    for (let d = 0; d < CLAW_DIM; d++) {
      const v = vectors[base + d];
      dot += v * query[d];
      norm += v * v;
    }
    scores[r] = dot / Math.sqrt(norm || 1);
  }
  return Array.from(scores.keys())
    .sort((a, b) => scores[b] - scores[a])
    .slice(0, topK);
}

function randomRows(count: number, dim: number): Float32Array {
  const rows = new Float32Array(count * dim);
  for (let i = 0; i < rows.length; i++) rows[i] = random() - 0.5;
  return rows;
}

const report: Record<string, unknown> = { files: FILES, requests: REQUESTS, clients: CLIENTS };
try {
  // 1. Load on the 10k-file workspace.
  const big = join(scratch, "ws-big");
  const queries = generator.generate(big, FILES);
  const loadQueries = generator.queries(REQUESTS);
  let t = performance.now();
  const ingested = await ingestWorkspace(big, { catalogPath });
  report.ingest = { files: ingested.files, chunks: ingested.chunks, seconds: (performance.now() - t) / 1000 };
  console.error(
    `ingested ${ingested.files} files, ${ingested.chunks} chunks in ${(report.ingest as { seconds: number }).seconds.toFixed(1)} s`,
  );
  const loads: LoadRun[] = [];
  const clientCpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  for (let round = 0; round < ROUNDS; round++)
    for (const workers of WORKER_COUNTS)
      for (const tree of round % 2 ? [...TREES].reverse() : TREES) {
        const server = await startServer(tree.dir, big, workers);
        try {
          const ask = (query: string) =>
            fetch(`${server.url}/v1/query`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ query, top_k: 8 }),
            });
          // Queries at once until every process has loaded the index and the model, as first clients would.
          await Promise.all(
            queries.slice(0, Math.max(1, workers) * 4).map(async (q) => (await ask(q)).arrayBuffer()),
          );
          const rssBefore = treeRssMb(server.pid);
          let serverCpu = treeCpuMs(server.pid);
          let client = clientCpuMs();
          const health = await load(REQUESTS, () => fetch(`${server.url}/health`));
          const healthCpu = cpuSpent(serverCpu, treeCpuMs(server.pid)) / REQUESTS;
          const clientHealth = (clientCpuMs() - client) / REQUESTS;
          serverCpu = treeCpuMs(server.pid);
          client = clientCpuMs();
          const query = await load(REQUESTS, (i) => ask(loadQueries[i]));
          const afterQueries = treeCpuMs(server.pid);
          const queryCpu = cpuSpent(serverCpu, afterQueries) / REQUESTS;
          const queryMain = (afterQueries.get(server.pid)! - serverCpu.get(server.pid)!) / REQUESTS;
          const clientQuery = (clientCpuMs() - client) / REQUESTS;
          loads.push({
            tree: tree.name,
            round,
            workers,
            health,
            query,
            cpu: { health: healthCpu, query: queryCpu, queryMain, clientHealth, clientQuery },
            rssMb: { before: rssBefore, after: treeRssMb(server.pid) },
          });
          console.error(
            `${tree.name}, workers ${workers}: /health p99 ${health.p99.toFixed(1)} ms, /v1/query p50 ${query.p50.toFixed(1)} p99 ${query.p99.toFixed(1)} ms, ${Math.round(query.perSecond)} req/s; server CPU ${queryCpu.toFixed(3)} ms an answer (its main process ${queryMain.toFixed(3)}; client ${clientQuery.toFixed(3)}); load ${loadavg()[0].toFixed(1)}`,
          );
        } finally {
          await server.stop();
        }
      }
  report.load = { runs: loads, distinctQueries: loadQueries.length };

  // 2. Growth: 1k, 10k, 100k chunks, next to a 1,536-dimension linear scan of as many vectors.
  const growth: {
    chunks: number;
    triforgeMs: number;
    triforgeCpuMs: number;
    linearScanMs: number;
    linearScanCpuMs: number;
  }[] = [];
  for (const files of args.includes("--no-growth") ? [] : GROWTH_FILES.filter((f) => f <= FILES)) {
    const root = files === FILES ? big : join(scratch, `ws-${files}`);
    const own = files === FILES ? queries : generator.generate(root, files);
    if (files !== FILES) await ingestWorkspace(root, { catalogPath });
    const index = await openIndex(root, { refresh: "never" });
    const chunks = index.texts.length;
    const timings: number[] = [];
    const cpuTimings: number[] = [];
    for (let q = 0; q < GROWTH_QUERIES; q++) {
      t = performance.now();
      const c = cpu();
      await searchLoaded(index, own[q % own.length], {
        topK: 8,
        maxSnippetLines: 12,
        content: "all",
        refresh: false,
      });
      cpuTimings.push(cpu() - c);
      timings.push(performance.now() - t);
    }
    const vectors = randomRows(chunks, CLAW_DIM);
    const queryVector = randomRows(1, CLAW_DIM);
    const scans: number[] = [];
    const cpuScans: number[] = [];
    for (let q = 0; q < Math.min(GROWTH_QUERIES, 40); q++) {
      t = performance.now();
      const c = cpu();
      linearScan(vectors, chunks, queryVector, 8);
      cpuScans.push(cpu() - c);
      scans.push(performance.now() - t);
    }
    for (const list of [timings, cpuTimings, scans, cpuScans]) list.sort((a, b) => a - b);
    const row = {
      chunks,
      triforgeMs: percentile(timings, 0.5),
      triforgeCpuMs: percentile(cpuTimings, 0.5),
      linearScanMs: percentile(scans, 0.5),
      linearScanCpuMs: percentile(cpuScans, 0.5),
    };
    growth.push(row);
    console.error(
      `${chunks} chunks: triforge p50 ${row.triforgeMs.toFixed(2)} ms (CPU ${row.triforgeCpuMs.toFixed(2)}), linear scan p50 ${row.linearScanMs.toFixed(2)} ms (CPU ${row.linearScanCpuMs.toFixed(2)})`,
    );
  }
  report.growth = growth;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

if (args.includes("--json")) console.log(JSON.stringify(report, null, 2));
else {
  const { load: l, growth } = report as {
    load: { runs: LoadRun[] };
    growth: {
      chunks: number;
      triforgeMs: number;
      triforgeCpuMs: number;
      linearScanMs: number;
      linearScanCpuMs: number;
    }[];
  };
  const cores = availableParallelism();
  const row = (name: string, r: LoadResult, serverCpu: number, clientCpu: number) =>
    `| ${name} | ${r.requests} | ${r.errors} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(1)} | ${Math.round(r.perSecond)} | ${serverCpu.toFixed(3)} | ${clientCpu.toFixed(3)} | ${Math.round((cores * 1000) / serverCpu)} |`;
  console.log(
    `Load: ${CLIENTS} clients, ${REQUESTS} requests each route, workspace ${JSON.stringify(report.ingest)}`,
  );
  console.log(
    `| route | requests | errors | p50 ms | p99 ms | max ms | req/s | server CPU ms an answer | client CPU ms | ${cores} cores / server CPU (answers/s) |\n|---|---|---|---|---|---|---|---|---|---|`,
  );
  for (const run of l.runs) {
    const name = `${TREES.length > 1 ? `${run.tree}, round ${run.round + 1}, ` : ""}${run.workers ? `--workers ${run.workers}` : "in the server"}`;
    console.log(row(`GET /health (${name})`, run.health, run.cpu.health, run.cpu.clientHealth));
    console.log(row(`POST /v1/query (${name})`, run.query, run.cpu.query, run.cpu.clientQuery));
  }
  for (const run of l.runs)
    console.log(
      `${TREES.length > 1 ? `${run.tree}, ` : ""}--workers ${run.workers}: /v1/query CPU ms an answer ${run.cpu.query.toFixed(3)}, of it the server process ${run.cpu.queryMain.toFixed(3)}`,
    );
  for (const run of l.runs)
    console.log(
      `server RSS (${TREES.length > 1 ? `${run.tree}, ` : ""}--workers ${run.workers}, its processes included): ${run.rssMb.before.toFixed(0)} MB before, ${run.rssMb.after.toFixed(0)} MB after`,
    );
  console.log(
    "\np50 ms, wall (CPU)\n| chunks | triforge query | linear scan 1536-d | ratio (CPU) |\n|---|---|---|---|",
  );
  for (const g of growth)
    console.log(
      `| ${g.chunks} | ${g.triforgeMs.toFixed(2)} (${g.triforgeCpuMs.toFixed(2)}) | ${g.linearScanMs.toFixed(2)} (${g.linearScanCpuMs.toFixed(2)}) | ${(g.linearScanCpuMs / g.triforgeCpuMs).toFixed(1)}× |`,
    );
}
