/**
 * `forget`: removes one session from memory — its chunks and exactly the graph weight they contributed
 * (store), its lines in chats.jsonl (the source of truth, rewritten under the index lock and the chat-log
 * lock that capture appends under), its summary entries — and remembers the session id so a rebuild or a
 * late capture never brings it back.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { logError } from "../home/log.ts";
import { chatLogPath, indexLockPath, recallSnapshotPath, summaryPath } from "../home/paths.ts";
import { discardStore, isStoreDamage, openStoreForRead, openStoreForWrite } from "../store/open.ts";
import type { ForgetResult } from "../store/types.ts";
import { withChatLogLock } from "./chatlog.ts";
import { waitForLock } from "./lock.ts";
import { removeSessionPins } from "./pins.ts";
import type { SharedOptions } from "./shared.ts";
import { writeSummaryFile } from "./summary.ts";

/** How long forget waits for a running indexer to finish before giving up. */
const LOCK_WAIT_MS = 15_000;

export interface ForgetReport extends ForgetResult {
  /** `unknown`: no chunk, chats.jsonl line or earlier forget names the session, so nothing was done. */
  status: "forgotten" | "busy" | "unknown";
  /** Lines removed from chats.jsonl. */
  lines: number;
  /** The session's pinned chunks dropped from pins.json: a forgotten text must not live on in the prelude. */
  pins: number;
  /**
   * With a shared store: `forgotten` there too, or `pending` (it could not be reached: the session is gone
   * from this machine and its mirror, and the next index run forgets it there).
   */
  shared?: "forgotten" | "pending";
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
 * Rewrites chats.jsonl without the lines `drop` picks, holding the chat-log lock that every capture append
 * holds too: no append can land in the old copy between our read and the rename, so none is lost.
 */
export function removeChatLogLines(projectRoot: string, drop: (line: string) => boolean): number {
  const file = chatLogPath(projectRoot);
  return withChatLogLock(projectRoot, "forget", () => {
    if (!existsSync(file)) return 0;
    const lines = readFileSync(file, "utf8").split("\n");
    // An unterminated last line (a writer that crashed mid-line) is kept as it is.
    const last = lines.pop() ?? "";
    const kept = lines.filter((line) => !drop(line));
    const removed = lines.length - kept.length;
    if (removed === 0) return 0;
    const temporary = `${file}.forget-${process.pid}.tmp`;
    writeFileSync(temporary, kept.map((line) => `${line}\n`).join("") + last);
    renameSync(temporary, file);
    return removed;
  });
}

export function removeSessionLines(projectRoot: string, sessionId: string): number {
  return removeChatLogLines(projectRoot, (line) => belongsTo(line, sessionId));
}

/**
 * After rows went from the store: the offset reset where chats.jsonl lost `lines` (the next run rescans
 * it; records dedupe by uuid), summary.md rewritten, and the recall snapshot, which holds the forgotten
 * words and vectors too, rebuilt without them (removed where that fails: recall reads the store until the
 * next index run). `what` names the command in errors.log.
 */
export async function refreshAfterForget(
  projectRoot: string,
  store: ReturnType<typeof openStoreForWrite>,
  lines: number,
  what: string,
): Promise<void> {
  if (lines) await store.setState({ offset: 0, offsetCheck: "" });
  writeSummaryFile(summaryPath(projectRoot), await store.summaries());
  const [{ refreshSnapshotFile }, { loadModel }] = await Promise.all([
    import("./recall/snapshot-file.ts"),
    import("../embed/source.ts"),
  ]);
  const snapshot = recallSnapshotPath(projectRoot);
  await refreshSnapshotFile(snapshot, store, async () => (await loadModel()).id).catch((error) => {
    rmSync(snapshot, { force: true });
    logError(`${what}: recall snapshot not rebuilt, removed`, error, projectRoot);
  });
}

/**
 * Whether the project has ever seen the session: stored chunks, lines in chats.jsonl not indexed yet, or
 * an earlier forget. A damaged store is skipped (chats.jsonl, the source of truth, still answers).
 */
export async function isKnownSession(projectRoot: string, sessionId: string): Promise<boolean> {
  let store: ReturnType<typeof openStoreForRead>;
  try {
    store = openStoreForRead(projectRoot);
    if (store && ((await store.hasSession(sessionId)) || (await store.forgottenSessions()).has(sessionId)))
      return true;
  } catch (error) {
    if (!isStoreDamage(error)) throw error;
  } finally {
    store?.close();
  }
  // Another machine's session, held in the local mirror of the shared store.
  const { mirrorHasSession } = await import("./shared.ts");
  if (await mirrorHasSession(projectRoot, sessionId)) return true;
  const file = chatLogPath(projectRoot);
  if (!existsSync(file)) return false;
  return readFileSync(file, "utf8")
    .split("\n")
    .some((line) => belongsTo(line, sessionId));
}

export interface ForgetOptions {
  /** Forget (and block for good) an id the project has never seen, e.g. one about to be captured. */
  force?: boolean;
  /** How the shared store is reached (tests pass a PGlite client). */
  shared?: SharedOptions;
}

export async function forgetSession(
  projectRoot: string,
  sessionId: string,
  options: ForgetOptions = {},
): Promise<ForgetReport> {
  const empty = { chunks: 0, facts: 0, entities: 0, edgesRemoved: 0, edgesLowered: 0, lines: 0, pins: 0 };
  // A typo would otherwise be remembered as forgotten, and a later session with that id never indexed.
  if (!options.force && !(await isKnownSession(projectRoot, sessionId)))
    return { status: "unknown", ...empty };
  const lock = await waitForLock(indexLockPath(projectRoot), "forget", LOCK_WAIT_MS);
  if (!lock) return { status: "busy", ...empty };
  try {
    const report = await forgetHere(projectRoot, sessionId);
    const { forgetInShared } = await import("./shared.ts");
    const shared = await forgetInShared(projectRoot, sessionId, options.shared);
    return shared ? { ...report, shared } : report;
  } finally {
    lock.release();
  }
}

/**
 * Forgets the session in this machine's store, chats.jsonl, pins and summary.md; the caller holds the
 * index lock (forget, or the indexer forgetting what another machine forgot in the shared store).
 */
export async function forgetHere(projectRoot: string, sessionId: string): Promise<ForgetReport> {
  let result: ForgetResult = { chunks: 0, facts: 0, entities: 0, edgesRemoved: 0, edgesLowered: 0 };
  let store: ReturnType<typeof openStoreForWrite> | undefined;
  try {
    store = openStoreForWrite(projectRoot);
    result = await store.forgetSession(sessionId);
  } catch (error) {
    if (!isStoreDamage(error)) throw error;
    // A damaged store is rebuilt from chats.jsonl by the next index run, which no longer holds the session.
    store = undefined;
    discardStore(projectRoot);
  }
  const lines = removeSessionLines(projectRoot, sessionId);
  const pins = removeSessionPins(projectRoot, sessionId);
  if (store) {
    await refreshAfterForget(projectRoot, store, lines, "forget");
    store.close();
  }
  return { status: "forgotten", ...result, lines, pins };
}
