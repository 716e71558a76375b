import { existsSync } from "node:fs";

/**
 * The folder `benchmark/checkout-repos.ts` filled with the semble benchmark repositories
 * (`TRIFORGE_BENCH_REPOS`); exits 2 with what to do when it is not set. Code-search benchmarks keep
 * their indexes in a scratch data directory unless TRIFORGE_HOME says otherwise.
 */
export function benchReposDir(): string {
  const reposDir = process.env.TRIFORGE_BENCH_REPOS;
  if (!reposDir || !existsSync(reposDir)) {
    console.error("set TRIFORGE_BENCH_REPOS to the folder benchmark/checkout-repos.ts filled");
    process.exit(2);
  }
  process.env.TRIFORGE_HOME ??= "/tmp/triforge-bench-home";
  return reposDir;
}
