#!/usr/bin/env bun
/**
 * Where a cold index of a repository spends its time, phase by phase (the main thread's view: with
 * parse workers, "syntax parse" is the main thread's own share plus its waits for the workers):
 *
 *   bun benchmark/code-profile.ts <repository> [...]
 *
 * Indexes go to a scratch TRIFORGE_HOME so user data is untouched.
 */
export {};
process.env.TRIFORGE_HOME ??= "/tmp/triforge-bench-home";
const { refreshIndex, resolveRepository } = await import("../src/code/indexer.ts");
const { loadModel } = await import("../src/embed/source.ts");
await loadModel();
for (const path of process.argv.slice(2)) {
  const timings: Record<string, number> = {};
  const started = performance.now();
  const index = await refreshIndex(resolveRepository(path), { force: true, timings });
  const total = performance.now() - started;
  const megabytes = index.files.reduce((sum, f) => sum + f.size, 0) / 1e6;
  console.log(
    `${path}: ${index.files.length} files, ${megabytes.toFixed(1)} MB, ${index.texts.length} chunks in ${total.toFixed(0)} ms (${Math.round(index.texts.length / (total / 1000))} chunks/s)`,
  );
  for (const [phase, ms] of Object.entries(timings).sort((a, b) => b[1] - a[1]))
    console.log(
      `  ${phase.padEnd(62)} ${ms.toFixed(0).padStart(6)} ms ${((100 * ms) / total).toFixed(0).padStart(3)}%`,
    );
}
