#!/usr/bin/env bun
/**
 * Checks out the code-search benchmark repositories (../shared/eval/code/semble-bench-dev/repos.json)
 * at their pinned revision, only their `benchmark_root`, from local bare mirrors:
 *
 *   bun benchmark/checkout-repos.ts --mirrors /work/.mirror [--dest $TRIFORGE_BENCH_REPOS]
 *
 * A mirror of github.com/<owner>/<name> is expected at `<mirrors>/<owner>+<name>/repo` (a bare git
 * directory). Where the pinned revision is missing from a mirror, the mirror's HEAD is used and the
 * substitution is printed and recorded in `<dest>/checkout.json`, so reports can say so.
 * Nothing checked out here belongs in the repository: point --dest outside the work tree.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

/**
 * The benchmark set: `repos.json` and `annotations/`. TRIFORGE_BENCH_SET points at another set of the
 * same layout (semble's annotations of repositories outside the development split, kept outside
 * this checkout), so every code benchmark can score repositories the ranking was never tuned on.
 */
export const BENCH_DIR = resolve(
  process.env.TRIFORGE_BENCH_SET || resolve(import.meta.dir, "../../shared/eval/code/semble-bench-dev"),
);

export interface BenchRepo {
  name: string;
  language: string;
  url: string;
  revision: string;
  benchmark_root?: string | null;
}

export function readBenchRepos(): BenchRepo[] {
  return JSON.parse(readFileSync(join(BENCH_DIR, "repos.json"), "utf8"));
}

function git(gitDir: string, args: string[]): { ok: boolean; out: string } {
  const proc = Bun.spawnSync(["git", `--git-dir=${gitDir}`, ...args], { stdout: "pipe", stderr: "pipe" });
  return { ok: proc.exitCode === 0, out: proc.stdout.toString().trim() };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { mirrors: { type: "string" }, dest: { type: "string" }, only: { type: "string" } },
  });
  const mirrors = values.mirrors;
  const dest = resolve(values.dest ?? process.env.TRIFORGE_BENCH_REPOS ?? "");
  if (!mirrors || (!values.dest && !process.env.TRIFORGE_BENCH_REPOS)) {
    console.error(
      "usage: bun benchmark/checkout-repos.ts --mirrors <dir> [--dest <dir> | TRIFORGE_BENCH_REPOS=<dir>]",
    );
    process.exit(2);
  }
  mkdirSync(dest, { recursive: true });
  const record: Record<string, { revision: string; pinned: boolean }> = {};
  for (const repo of readBenchRepos()) {
    if (values.only && !values.only.split(",").includes(repo.name)) continue;
    const [owner, name] = new URL(repo.url).pathname.replace(/^\/|\.git$/g, "").split("/");
    const gitDir = join(mirrors, `${owner}+${name}`, "repo");
    if (!existsSync(gitDir)) {
      console.error(`${repo.name}: no mirror at ${gitDir}, skipped`);
      continue;
    }
    const pinned = git(gitDir, ["cat-file", "-e", `${repo.revision}^{commit}`]).ok;
    const revision = pinned ? repo.revision : git(gitDir, ["rev-parse", "HEAD"]).out;
    const target = join(dest, repo.name);
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    const paths = repo.benchmark_root ? [repo.benchmark_root] : [];
    const archive = Bun.spawn(["git", `--git-dir=${gitDir}`, "archive", "--format=tar", revision, ...paths], {
      stdout: "pipe",
      stderr: "inherit",
    });
    const tar = Bun.spawn(["tar", "-x", "-C", target], { stdin: archive.stdout, stderr: "inherit" });
    if ((await archive.exited) !== 0 || (await tar.exited) !== 0) {
      console.error(`${repo.name}: checkout failed`);
      continue;
    }
    record[repo.name] = { revision, pinned };
    console.log(
      `${repo.name.padEnd(14)} ${revision.slice(0, 12)}${pinned ? "" : "  (pinned revision missing: mirror HEAD used)"}`,
    );
  }
  const file = join(dest, "checkout.json");
  const previous = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  writeFileSync(file, `${JSON.stringify({ ...previous, ...record }, null, 2)}\n`);
}
