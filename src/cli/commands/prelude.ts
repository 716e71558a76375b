import { estimateTokens, runName, writePendingRecord } from "../../home/ledger.ts";
import { logError } from "../../home/log.ts";
import { openSessionsDir, summaryPath } from "../../home/paths.ts";
import {
  currentReplacedKeys,
  preludeContext,
  replacedSidecarPath,
  sessionStartOutput,
} from "../../memory/prelude.ts";
import { projectPreludeOptions } from "../../memory/prelude-project.ts";
import { findProjectRootAsync } from "../../project/config.ts";
import { defineCommand } from "../command.ts";
import { readHookStdin } from "../hook-stdin.ts";

// PERF: a SessionStart hook on every session; imports only small local modules (no SDK, no zod, no
// model, and no node:fs: ~1.2 ms, so files are read through Bun.file), so it costs about what an
// empty binary start costs. Output through console.log and input from fd 0: touching
// process.stdout/stdin costs 7-9 ms each (CONTRIBUTING.md), and stdin is read only when --project is
// absent.

/** Bytes read from the end of summary.md: far more than the prelude budget, bounded as the file grows. */
const SUMMARY_TAIL_BYTES = 64 * 1024;

export default defineCommand({
  hook: true,
  usage: "triforge prelude [--project=<path>]",
  description:
    "SessionStart hook: prints Claude Code hook JSON carrying the entries of the project's session summary that matter " +
    "to this session (ranked by the branch, recent commits and recency; files marked changed or gone; replaced " +
    "decisions left out; `prelude.tokens` in .triforge/config.json, default 800) as recalled data. Prints nothing for a project that is not active or has no summary yet. Never fails the session.",
  options: {
    project: {
      type: "string",
      arg: "path",
      description: "Project folder (walks up to the active root); default: the hook's cwd",
    },
  },
  async run({ values }) {
    let root: string | undefined;
    let ledger: PreludeRun | undefined;
    try {
      const start = typeof values.project === "string" ? values.project : (hookInputCwd() ?? process.cwd());
      root = await findProjectRootAsync(start);
      if (!root) return 0;
      // The ledger's record: `started` now, replaced by the outcome, so a run killed at its timeout shows
      // (the catch-up below included). PERF: Date.now, not performance.now: the `performance` global costs
      // ~0.8 ms at first use here.
      const started = Date.now();
      const record = { ts: new Date().toISOString(), event: "prelude" as const, run: runName("prelude") };
      // PERF: the `started` write runs while the summary, config, pins and .git are read (each first
      // async file operation costs ~1 ms awaited one after another); the outcome waits for it.
      const startedWrite = writePendingRecord(root, record.run, { ...record, outcome: "started" });
      ledger = { root, run: record.run, started, record, startedWrite };
      if (hasOpenSessions(root)) await catchUpOpenSessions(root);
      const summary = Bun.file(summaryPath(root));
      const [tail, options, sidecar] = await Promise.all([
        readTail(summary, SUMMARY_TAIL_BYTES),
        projectPreludeOptions(root),
        readReplacedSidecar(summary),
      ]);
      if (!tail) {
        await endRecord(ledger, "ok", 0);
        return 0;
      }
      const replaced = currentReplacedKeys(sidecar, summary);
      const withReplaced = replaced ? { ...options, replaced } : options;
      // One entry longer than the whole tail window: fall back to the full file rather than say nothing.
      const context =
        preludeContext(tail.text, withReplaced) ??
        (tail.partial ? preludeContext(await summary.text(), withReplaced) : undefined);
      if (context) console.log(sessionStartOutput(context));
      await endRecord(ledger, "ok", context ? estimateTokens(context) : 0);
    } catch (error) {
      logError("prelude", error, root);
      if (ledger) await endRecord(ledger, "failed", 0, (error as Error).message);
    }
    return 0;
  },
});

interface PreludeRun {
  root: string;
  run: string;
  started: number;
  record: { ts: string; event: "prelude"; run: string };
  /** The `started` record's write, which the outcome must not overtake. */
  startedWrite: Promise<void>;
}

/** The run's outcome in place of its `started` record (one file under hooks.pending/, no node:fs). */
async function endRecord(
  run: PreludeRun,
  outcome: "ok" | "failed",
  tokens: number,
  error?: string,
): Promise<void> {
  const ms = Date.now() - run.started;
  await run.startedWrite;
  await writePendingRecord(run.root, run.run, {
    ...run.record,
    outcome,
    ms,
    tokens,
    ...(error ? { error } : {}),
  });
}

/** Whether a session of the project was left open. PERF: a glob, no node:fs; usually none. */
function hasOpenSessions(root: string): boolean {
  try {
    for (const _ of new Bun.Glob("*.json").scanSync({ cwd: openSessionsDir(root), onlyFiles: true }))
      return true;
  } catch {
    // No such folder: nothing was ever captured, or everything has ended.
  }
  return false;
}

/**
 * Sessions of this project whose SessionEnd never ran (a crash, a closed terminal, `kill -9`) are
 * read to the end of their transcripts, and the indexer started for what that added, so that the
 * next session remembers them. Logs and carries on when that fails: the prelude still runs.
 */
async function catchUpOpenSessions(root: string): Promise<void> {
  try {
    const { catchUpOpenSessions } = await import("../../memory/capture.ts");
    if (catchUpOpenSessions(root) === 0) return;
    (await import("../../memory/background.ts")).startIndexerUnlessRunning(root);
  } catch (error) {
    logError("capture (SessionStart)", error, root);
  }
}

/**
 * The `cwd` of the hook JSON on stdin, when the hook was not given --project. Absent, empty or
 * garbage input is not an error: the prelude then uses its own working directory.
 */
function hookInputCwd(): string | undefined {
  const raw = readHookStdin();
  if (raw === undefined) return undefined;
  try {
    const cwd = (JSON.parse(raw) as { cwd?: unknown } | null)?.cwd;
    return typeof cwd === "string" && cwd ? cwd : undefined;
  } catch {
    return undefined;
  }
}

/** summary.md's replaced decisions as its writer saved them (memory/summary.ts); undefined when unreadable. */
async function readReplacedSidecar(summary: Bun.BunFile): Promise<unknown> {
  try {
    const file = Bun.file(replacedSidecarPath(summary.name as string));
    // PERF: a (sync) size rather than an awaited exists(). Missing, empty, garbage or a FIFO: worked out instead.
    return file.size > 0 && Number.isFinite(file.size) ? await file.json() : undefined;
  } catch {
    return undefined;
  }
}

/** The last `bytes` of a file from a line start; undefined when it is missing or empty. */
async function readTail(
  file: Bun.BunFile,
  bytes: number,
): Promise<{ text: string; partial: boolean } | undefined> {
  // A missing file has size 0, as an empty one: nothing to recall either way. A folder in its place
  // has a size, and reading it throws (logged by the caller). A FIFO or a device has no end (size
  // Infinity): reading it would block the session's start, so it is not read. PERF: no stat call.
  const size = file.size;
  if (size === Number.POSITIVE_INFINITY)
    throw new Error(`${file.name} is not a regular file; not reading it`);
  if (size === 0) return undefined;
  const start = Math.max(0, size - bytes);
  let text: string;
  try {
    text = await file.slice(start).text();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined; // removed meanwhile
    throw error;
  }
  // Starting mid-file means starting mid-line: drop that partial line (it may not be a real header).
  return start === 0 ? { text, partial: false } : { text: text.slice(text.indexOf("\n") + 1), partial: true };
}
