import { realpathSync } from "node:fs";
import { basename, resolve } from "node:path";
import { isCompiled } from "../home/runtime.ts";
import { shellQuote } from "../home/shell.ts";

/**
 * How an agent starts this triforge: the argv prefix before the subcommand.
 * - TRIFORGE_BINARY (tests, packagers, wrappers) wins;
 * - a compiled binary is `process.execPath` itself;
 * - run from source (`bun src/index.ts`), execPath is Bun, so the script must follow it.
 */
export function launcher(env: Record<string, string | undefined> = process.env): string[] {
  if (env.TRIFORGE_BINARY) return [resolve(env.TRIFORGE_BINARY)];
  if (isCompiled()) return [stablePath(process.execPath, env.PATH)];
  return [process.execPath, resolve(Bun.main)];
}

/**
 * The name on PATH when it leads to this very binary: package managers link a stable path
 * (/opt/homebrew/bin/triforge) to a versioned one that an upgrade removes, so configs keep the link.
 */
function stablePath(executable: string, path: string | undefined): string {
  const onPath = Bun.which(basename(executable), { PATH: path ?? "" });
  try {
    if (onPath && realpathSync(onPath) === realpathSync(executable)) return onPath;
  } catch {
    // A dangling link on PATH: the real path is the one that works.
  }
  return executable;
}

export type Platform = NodeJS.Platform;

/**
 * A hook command line, for the shell Claude Code runs hooks with (see `shellQuote`): the launcher, a
 * subcommand and its options, each quoted as needed.
 */
export function commandLine(argv: string[], platform: Platform = process.platform): string {
  return argv
    .map((arg) => {
      // `--project=<path>`: quote only the value, so the option name stays readable.
      const option = /^(--[a-z-]+=)(.*)$/s.exec(arg);
      return option ? option[1] + shellQuote(option[2], platform) : shellQuote(arg, platform);
    })
    .join(" ");
}
