#!/usr/bin/env bun
/**
 * Where a cold index of a repository spends its time, phase by phase:
 *
 *   bun benchmark/code-profile.ts [--wall] <repository> [...]
 *
 * Phases are the main thread's CPU time (Linux; elsewhere wall time), which other processes on a
 * shared machine barely disturb; time spent waiting for workers is not in them. --wall measures
 * phases in wall time instead (with parse workers, "syntax parse" is then the main thread's own
 * share plus its waits for them). The total line gives wall time and the CPU time of all threads.
 * Indexes go to a scratch TRIFORGE_HOME so user data is untouched.
 */
import { threadCpuClock } from "./cpu-clock.ts";

process.env.TRIFORGE_HOME ??= "/tmp/triforge-bench-home";
const { refreshIndex, resolveRepository } = await import("../src/code/refresh.ts");
const { loadModel } = await import("../src/embed/source.ts");

const args = process.argv.slice(2);
const wall = args.includes("--wall");
const clock = wall ? undefined : threadCpuClock();
await loadModel();
for (const path of args.filter((a) => a !== "--wall")) {
  const timings: Record<string, number> = {};
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const index = await refreshIndex(resolveRepository(path), { force: true, timings, clock });
  const total = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const megabytes = index.files.reduce((sum, f) => sum + f.size, 0) / 1e6;
  console.log(
    `${path}: ${index.files.length} files, ${megabytes.toFixed(1)} MB, ${index.texts.length} chunks in ${total.toFixed(0)} ms (${Math.round(index.texts.length / (total / 1000))} chunks/s)`,
  );
  console.log(
    `  CPU of all threads ${cpuMs.toFixed(0)} ms (${(cpuMs / total).toFixed(2)} cores busy on average); workers parsed ${index.report.parsedInWorkers} files and redacted ${index.report.redactedInWorker}`,
  );
  const basis = clock ? "main thread CPU" : "wall";
  const phaseTotal = Object.values(timings).reduce((a, b) => a + b, 0);
  console.log(`  phases (${basis}, ${phaseTotal.toFixed(0)} ms in all):`);
  for (const [phase, ms] of Object.entries(timings).sort((a, b) => b[1] - a[1]))
    console.log(`    ${phase.padEnd(62)} ${ms.toFixed(0).padStart(6)} ms`);
}
