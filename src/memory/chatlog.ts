/**
 * The per-project conversation log, `projectDataDir(root)/chats.jsonl`: one JSON object a line,
 * append-only, written by the `capture` hook and read by the indexer. Several sessions of one project
 * may stop at the same moment, so every writer holds the project's chat-log lock (`chats.lock`);
 * whatever rewrites the file (`forget`, and the indexer replacing review-flagged lines with their cleaned
 * text) must hold it too, or a capture could append to the old copy.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { chatLogLockPath, chatLogPath } from "../home/paths.ts";
import { tryLock } from "./lock.ts";

/** One line of chats.jsonl (the capture → memory contract). */
export interface ChatRecord {
  /** When it was said (the transcript's timestamp), ISO 8601. */
  ts: string;
  session_id: string;
  role: "user" | "assistant";
  /** Already redacted: nothing unredacted reaches the disk. */
  text: string;
  /** The transcript uuid the turn started at: the record's key, never written twice. */
  uuid: string;
  /** Redaction left a trigger word near a high-entropy string: the indexer's cleaner looks again. */
  review?: true;
}

/**
 * Appends records as whole lines in one write. The caller holds the lock; one `write` of whole lines
 * also means a reader never sees half a record, except after a crash mid-write, which readers skip.
 */
export function appendChatRecords(projectRoot: string, records: ChatRecord[]): void {
  if (!records.length) return;
  appendFileSync(chatLogPath(projectRoot), records.map((r) => `${JSON.stringify(r)}\n`).join(""));
}

/** How long a writer waits for the lock: a hook must finish well inside its timeout. */
const LOCK_WAIT_MS = 3_000;
/** Longest pause between attempts; holders keep the lock for about a millisecond. */
const MAX_PAUSE_MS = 16;

function holderOf(path: string): string {
  try {
    const { pid, host, purpose } = JSON.parse(readFileSync(path, "utf8"));
    return `${purpose} (pid ${pid} on ${host})`;
  } catch {
    return "another process";
  }
}

/**
 * Runs `fn` holding the project's chat-log lock (the project lock file of ./lock.ts: O_EXCL, a dead
 * or silent holder's lock is taken over). Throws when the lock cannot be had within LOCK_WAIT_MS.
 */
export function withChatLogLock<T>(projectRoot: string, purpose: string, fn: () => T): T {
  const path = chatLogLockPath(projectRoot);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    const lock = tryLock(path, purpose);
    if (lock) {
      try {
        return fn();
      } finally {
        lock.release();
      }
    }
    if (Date.now() > deadline)
      throw new Error(`${path} is held by ${holderOf(path)}; gave up after ${LOCK_WAIT_MS} ms`);
    // Jitter, so that waiters woken together do not collide again.
    Bun.sleepSync(pause * (0.5 + Math.random()));
  }
}
