/**
 * `forget`: removes one session from memory — its chunks and exactly the graph weight they contributed
 * (store), its lines in chats.jsonl (the source of truth, rewritten under the project lock), its summary
 * entries — and remembers the session id so a rebuild or a late capture never brings it back.
 */
import { closeSync, existsSync, openSync, readSync, renameSync, statSync, writeFileSync } from "node:fs";
import {
  chatLogPath,
  discardStore,
  openStoreForWrite,
  StoreCorruptError,
  summaryPath,
} from "../store/index.ts";
import type { ForgetResult } from "../store/types.ts";
import { indexLockPath, type ProjectLock, tryLock } from "./lock.ts";
import { writeSummaryFile } from "./summary.ts";

/** How long forget waits for a running indexer to finish before giving up. */
const LOCK_WAIT_MS = 15_000;
const LOCK_POLL_MS = 100;

export interface ForgetReport extends ForgetResult {
  status: "forgotten" | "busy";
  /** Lines removed from chats.jsonl. */
  lines: number;
}

async function waitForLock(projectRoot: string): Promise<ProjectLock | undefined> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const lock = tryLock(indexLockPath(projectRoot), "forget");
    if (lock || Date.now() > deadline) return lock;
    await Bun.sleep(LOCK_POLL_MS);
  }
}

function readRange(file: string, start: number, end: number): Buffer {
  const buffer = Buffer.alloc(Math.max(0, end - start));
  const fd = openSync(file, "r");
  try {
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, start + read);
      if (n === 0) break;
      read += n;
    }
  } finally {
    closeSync(fd);
  }
  return buffer;
}

/** Whether a chats.jsonl line belongs to `sessionId` (unreadable lines are kept: they are not ours to drop). */
function belongsTo(line: string, sessionId: string): boolean {
  if (!line.includes(sessionId)) return false;
  try {
    return (JSON.parse(line) as { session_id?: unknown }).session_id === sessionId;
  } catch {
    return false;
  }
}

/**
 * Rewrites chats.jsonl without the session's lines. Capture may append while we copy: whatever the file
 * grew by is copied (filtered) too, until it stops growing, and only then is the copy renamed over it.
 */
export function removeSessionLines(file: string, sessionId: string): number {
  if (!existsSync(file)) return 0;
  const temporary = `${file}.forget-${process.pid}.tmp`;
  let removed = 0;
  let copied = 0;
  let pending = "";
  const out: string[] = [];
  for (;;) {
    const size = statSync(file).size;
    if (size === copied) break;
    const text = pending + readRange(file, copied, size).toString("utf8");
    copied = size;
    const lines = text.split("\n");
    pending = lines.pop() ?? ""; // an unterminated last line may still be being written
    for (const line of lines) {
      if (belongsTo(line, sessionId)) removed++;
      else out.push(`${line}\n`);
    }
  }
  if (removed === 0) return 0;
  writeFileSync(temporary, out.join("") + pending);
  renameSync(temporary, file);
  return removed;
}

export async function forgetSession(projectRoot: string, sessionId: string): Promise<ForgetReport> {
  const lock = await waitForLock(projectRoot);
  const empty = { chunks: 0, facts: 0, entities: 0, edgesRemoved: 0, edgesLowered: 0, lines: 0 };
  if (!lock) return { status: "busy", ...empty };
  try {
    let result: ForgetResult = empty;
    let store: ReturnType<typeof openStoreForWrite> | undefined;
    try {
      store = openStoreForWrite(projectRoot);
      result = await store.forgetSession(sessionId);
    } catch (error) {
      if (!(error instanceof StoreCorruptError)) throw error;
      // A damaged store is rebuilt from chats.jsonl by the next index run, which no longer holds the session.
      store = undefined;
      discardStore(projectRoot);
    }
    const lines = removeSessionLines(chatLogPath(projectRoot), sessionId);
    if (store) {
      // chats.jsonl changed under the saved offset: the next run rescans it (records dedupe by uuid).
      if (lines) await store.setState({ offset: 0, offsetCheck: "" });
      writeSummaryFile(summaryPath(projectRoot), await store.summaries());
      store.close();
    }
    return { status: "forgotten", ...result, lines };
  } finally {
    lock.release();
  }
}
