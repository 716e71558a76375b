/**
 * The per-project conversation log, `projectDataDir(root)/chats.jsonl`: one JSON object a line,
 * append-only, written by the `capture` hook and read by the indexer. Several sessions of one project
 * may stop at the same moment, so every writer holds the project's chat-log lock (`chats.lock`);
 * whatever rewrites the file (`forget`, and the indexer replacing review-flagged lines with their cleaned
 * text) must hold it too, or a capture could append to the old copy.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, writeSync } from "node:fs";
import { readAt } from "../home/file-io.ts";
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
  /**
   * The record's key, never written twice: the transcript uuid the turn started at, or, for an
   * assistant reply taken from the Stop hook's payload before the transcript held it,
   * `reply:<prompt id>:<hash of the text>` (see capture.ts).
   */
  uuid: string;
  /** Redaction left a trigger word near a high-entropy string: the indexer's cleaner looks again. */
  review?: true;
}

/**
 * Opens a file only when it is a regular file: O_NONBLOCK, so a FIFO (or a device) put in its place
 * cannot block the open, and an fstat check before anything is read or written. Throws ENOENT as
 * `openSync` does, and a clear error for anything that is not a regular file.
 */
export function openRegularFile(path: string, flags: number): number {
  const fd = openSync(path, flags | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${path} is not a regular file; not reading it`);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Appends records as whole lines in one write and returns the log's size after it. The caller holds
 * the lock. Every append starts on a line boundary: a last line left without its newline (a writer
 * killed mid-write) is fenced off with one, so it stays one unreadable line that readers skip and
 * our first record is never glued to it. With nothing to write the log is left as it is.
 */
export function appendChatRecords(projectRoot: string, records: ChatRecord[]): number {
  const file = chatLogPath(projectRoot);
  const fd = openRegularFile(file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT);
  try {
    const size = fstatSync(fd).size;
    if (!records.length) return size;
    const torn = size > 0 && readAt(fd, size - 1, 1)[0] !== 10;
    const text = (torn ? "\n" : "") + records.map((r) => `${JSON.stringify(r)}\n`).join("");
    const bytes = Buffer.from(text);
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
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
 * or silent holder's lock is taken over). Throws when the lock cannot be had within `waitMs`.
 */
export function withChatLogLock<T>(
  projectRoot: string,
  purpose: string,
  fn: () => T,
  waitMs = LOCK_WAIT_MS,
): T {
  const path = chatLogLockPath(projectRoot);
  const deadline = Date.now() + waitMs;
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
      throw new Error(`${path} is held by ${holderOf(path)}; gave up after ${waitMs} ms`);
    // Jitter, so that waiters woken together do not collide again.
    Bun.sleepSync(pause * (0.5 + Math.random()));
  }
}
