/**
 * A coding agent's real CLI for end-to-end tests, installed from the npm registry once per version into
 * a cache outside the repository (TRIFORGE_E2E_DIR), like Claude Code in ./claude-cli.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnCollect } from "./helpers.ts";

const CACHE = process.env.TRIFORGE_E2E_DIR ?? join(tmpdir(), "triforge-e2e");

/** npm failures that mean "no registry here", the only reason such a test may skip. */
const OFFLINE =
  /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network request .* failed|getaddrinfo/i;

/**
 * `node_modules/.bin/<bin>` of `pkg@version`, installed into the cache when missing (into a scratch
 * folder, then renamed: runs may race); `skip` says why when npm or its registry is not there.
 */
export async function installNpmCli(
  pkg: string,
  version: string,
  bin: string,
): Promise<{ binary?: string; skip?: string }> {
  const dir = join(CACHE, `${pkg.replace(/[@/]/g, "_")}-${version}`);
  const binary = join(dir, "node_modules", ".bin", bin);
  if (existsSync(binary)) return { binary };
  if (!Bun.which("npm")) return { skip: "npm is not installed" };
  mkdirSync(CACHE, { recursive: true });
  const scratch = mkdtempSync(join(CACHE, ".install-"));
  try {
    const npm = await spawnCollect(
      [
        "npm",
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--prefix",
        scratch,
        `${pkg}@${version}`,
      ],
      { env: process.env },
    );
    if (npm.code !== 0) {
      if (OFFLINE.test(npm.stdout + npm.stderr)) return { skip: "the npm registry is unreachable" };
      throw new Error(`npm install ${pkg}@${version} failed (${npm.code}):\n${npm.stderr}`);
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(scratch, dir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return { binary };
}

/** Prints the notice a skipped end-to-end test leaves in the run's output. */
export function warnSkipped(file: string, why: string): void {
  console.warn(`\n${"!".repeat(78)}\n!! SKIPPING ${file}: ${why}\n${"!".repeat(78)}\n`);
}
