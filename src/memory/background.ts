/**
 * Starting the indexer detached, for the SessionEnd hook: the hook returns at once (Claude Code allows
 * it about 1.5 s) while indexing goes on in a process of its own — a new session on Unix (setsid), a
 * detached process with a new process group on Windows (Bun's `detached` maps to libuv's
 * UV_PROCESS_DETACHED: DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP).
 */
import { indexLockPath } from "../home/paths.ts";
import { isCompiled } from "../home/runtime.ts";
import { isLocked } from "./lock.ts";

/** The command that runs this same program: the compiled binary alone, or bun with the entry script. */
export function selfCommand(): string[] {
  return isCompiled() ? [process.execPath] : [process.execPath, Bun.main];
}

/** Spawns `triforge index --project=<root>` detached; returns its pid. */
export function spawnDetachedIndexer(projectRoot: string): number {
  const child = Bun.spawn([...selfCommand(), "index", `--project=${projectRoot}`], {
    detached: true,
    stdio: ["ignore", "ignore", "ignore"],
    windowsHide: true,
    env: { ...process.env, TRIFORGE_BACKGROUND: "1" },
  });
  child.unref();
  return child.pid;
}

/**
 * Starts the detached indexer unless one is running for the project already (it reads everything new
 * when it starts, so a second one would only wait on the lock). Whether it started one.
 */
export function startIndexerUnlessRunning(projectRoot: string): boolean {
  if (isLocked(indexLockPath(projectRoot))) return false;
  spawnDetachedIndexer(projectRoot);
  return true;
}
