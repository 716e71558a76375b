/**
 * Capture: the new prose of a Claude Code transcript → the project's chat log, redacted.
 *
 * Runs after every agent reply (the `Stop` hook), at the end of a session (`SessionEnd`, before the
 * indexer starts) and at the start of the next one (`SessionStart` catches up sessions whose
 * SessionEnd never ran). Its cost must not grow with the transcript or the log: per session it keeps
 * the byte offset it has read up to and reads only what was added since, in bounded chunks, within a
 * time budget; what is left is read by the next capture.
 *
 * Claude Code may run `Stop` before it has written the reply, or the transcript at all (2.1.197 does,
 * every time, when the hook is fast). The hook's payload carries the reply's last text
 * (`last_assistant_message`, with `prompt_id`): when the transcript does not hold it yet, it is stored
 * from there under the key `reply:<prompt id>:<hash>`, and the same text read later from the
 * transcript (each part of a reply is hashed the same way) is not stored again. A missing or short
 * transcript is not an error: the next capture reads it.
 *
 * What was captured is known from chats.jsonl itself, never only from capture's own state: every
 * record's `uuid` is its key, and a capture skips every turn whose key the log holds. On the normal
 * path it reads only the log's tail since its session's last capture (what a capture that died
 * before saving its state appended); when a transcript is read from its start, re-read after a shrink,
 * or the state is gone or damaged, it uses the keys of the whole log (`capture/log-keys`, a cache
 * checked against the log and rebuilt from it when it does not match). So losing any of `capture/`
 * re-reads without duplicating and without losing a turn.
 *
 * Files in `captureStateDir(root)`:
 *   `<session>.json`      where to resume: transcript, offset, fingerprint, log position (SessionState).
 *   `open/<session>.json` a live session not ended yet: SessionStart catches it up if SessionEnd never ran.
 *   `log-keys`, `.json`   cache of every key in chats.jsonl, and the log position it covers.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { readAt, writeAt } from "../home/file-io.ts";
import { captureStateDir, chatLogPath, openSessionsDir } from "../home/paths.ts";
import { redact } from "../privacy/index.ts";
import { appendChatRecords, type ChatRecord, openRegularFile, withChatLogLock } from "./chatlog.ts";
import { TranscriptParser } from "./transcript.ts";

/** What a hook passes on stdin (Claude Code's common hook input, the fields capture uses). */
export interface HookInput {
  session_id: string;
  transcript_path: string;
  cwd?: string;
  hook_event_name?: string;
  /** Stop (CLI 2.1.1xx on): the text of the reply's last record, written or not to the transcript yet. */
  last_assistant_message?: string;
  /** Stop, SessionEnd (CLI 2.1.1xx on): the prompt the reply answers; its user records carry it too. */
  prompt_id?: string;
}

/** Validates the hook's JSON; the message names what is wrong, for errors.log. */
export function parseHookInput(raw: string): HookInput {
  let input: unknown;
  try {
    input = JSON.parse(raw);
  } catch {
    // Only the size: the input is unredacted and errors.log is on disk.
    throw new Error(`hook input is not JSON (${raw.length} characters)`);
  }
  if (!input || typeof input !== "object" || Array.isArray(input))
    throw new Error("hook input is not a JSON object");
  const fields = input as Record<string, unknown>;
  const { session_id, transcript_path } = fields;
  if (typeof session_id !== "string" || !session_id) throw new Error("hook input has no session_id");
  if (typeof transcript_path !== "string" || !transcript_path)
    throw new Error("hook input has no transcript_path");
  const text = (name: string) => (typeof fields[name] === "string" ? (fields[name] as string) : undefined);
  return {
    session_id,
    transcript_path,
    cwd: text("cwd"),
    hook_event_name: text("hook_event_name"),
    last_assistant_message: text("last_assistant_message"),
    prompt_id: text("prompt_id"),
  };
}

export interface CaptureOptions {
  /** The Stop hook's `last_assistant_message`: stored when the transcript does not hold it yet. */
  lastAssistantMessage?: string;
  /** The Stop hook's `prompt_id`: part of the key of a reply taken from the payload. */
  promptId?: string;
  /** Milliseconds of reading, once the lock is held; the rest waits for the next capture. */
  budgetMs?: number;
  /** How long to wait for the chat-log lock (default 3 s). */
  lockWaitMs?: number;
  /**
   * A hook of a running session (Stop): the session goes on the list of open sessions, which the next
   * SessionStart reads to the end should this one's SessionEnd never run.
   */
  live?: boolean;
  /** The session is over (SessionEnd): once fully read it leaves that list. */
  ended?: boolean;
}

export interface CaptureResult {
  /** Records appended to chats.jsonl. */
  appended: number;
  /** Turns already in the log (a re-read), not written again. */
  skipped: number;
  /** Transcript lines that were not JSON. */
  malformed: number;
  /** Lines longer than MAX_LINE_BYTES, skipped unread. */
  oversized: number;
  /** Transcript bytes read (complete lines only). */
  bytesRead: number;
  /** The transcript shrank, was replaced or moved: it was read again from the start. */
  reread: boolean;
  /** The transcript does not exist (yet): the next capture reads it. */
  missing: boolean;
  /** The budget ran out with more to read: the next capture goes on from here. */
  deferred: boolean;
  /** The reply was taken from the hook's payload (the transcript did not hold it yet). */
  fromPayload: boolean;
}

interface SessionState {
  transcript: string;
  /** Transcript bytes read: the end of a complete line, or inside an over-long line being skipped. */
  offset: number;
  /** Hash of the FINGERPRINT_BYTES before `offset`: tells an appended file from a replaced one. */
  fingerprint: string;
  /** The furthest offset ever read of this transcript: reading below it again may meet old turns. */
  highWater: number;
  /** `offset` is inside a line longer than MAX_LINE_BYTES, skipped up to its newline. */
  skipping?: boolean;
  /** The prompt in progress at `offset`. */
  promptId?: string;
  /** chats.jsonl size after this session's last capture, and the hash of the bytes before it. */
  logEnd: number;
  logFingerprint: string;
  /** Keys of replies stored from the payload that no transcript part has matched yet. */
  replies: string[];
  /** Reply keys of the last parts read from the transcript (is the payload's text there already?). */
  seenParts: string[];
}

/** Bytes before an offset that must be unchanged for a file to count as the same file, only longer. */
const FINGERPRINT_BYTES = 4096;
/** Bytes read at a time: a transcript's new part is never held whole. */
const CHUNK_BYTES = 4 << 20;
/** A longer transcript line is skipped (a pasted image or log; no prose worth a memory). */
const MAX_LINE_BYTES = 64 << 20;
/** Reading time of one capture: inside Stop's timeout with the 3 s lock wait and start-up. */
const DEFAULT_BUDGET_MS = 4_000;
/** How many recent reply keys a session's state remembers. */
const RECENT_KEYS = 32;
/** A caught-up session whose transcript has not changed for this long leaves the open list. */
const IDLE_AFTER_MS = 10 * 60_000;

const LOG_KEYS_FILE = "log-keys";

/** A session id from stdin becomes a file name: keep it one path segment, whatever it holds. */
function sessionFileStem(sessionId: string): string {
  return /^[\w.-]{1,128}$/.test(sessionId) && !/^\.+$/.test(sessionId)
    ? sessionId
    : `session-${Bun.hash(sessionId).toString(16)}`;
}

function fingerprint(fd: number | undefined, end: number): string {
  if (fd === undefined || end === 0) return "0";
  const start = Math.max(0, end - FINGERPRINT_BYTES);
  return Bun.hash(readAt(fd, start, end - start)).toString(16);
}

/** The key of a reply part: the same for the payload's text and for that text read from the transcript. */
export function replyKey(promptId: string | undefined, text: string): string {
  return `reply:${promptId ?? ""}:${Bun.hash(text.trim()).toString(16)}`;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === "ENOENT";
}

/** A small file of ours, read only when it is a regular file; undefined when missing. */
function readSmallFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openRegularFile(path, constants.O_RDONLY);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  try {
    return readAt(fd, 0, fstatSync(fd).size).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Written beside and renamed over: a reader sees the old file or the new one, never half. */
function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

function readState(file: string): SessionState | undefined {
  const raw = readSmallFile(file);
  if (raw === undefined) return undefined;
  try {
    const state = JSON.parse(raw) as SessionState;
    if (
      typeof state.transcript === "string" &&
      typeof state.offset === "number" &&
      typeof state.fingerprint === "string" &&
      typeof state.highWater === "number" &&
      typeof state.logEnd === "number" &&
      typeof state.logFingerprint === "string" &&
      Array.isArray(state.replies) &&
      Array.isArray(state.seenParts)
    )
      return state;
  } catch {
    // A damaged state only costs a re-read; the log's keys prevent duplicates.
  }
  return undefined;
}

function addKey(line: string, keys: Set<string>): void {
  try {
    const uuid = (JSON.parse(line) as { uuid?: unknown }).uuid;
    if (typeof uuid === "string") keys.add(uuid);
  } catch {
    // A torn or foreign line holds no key.
  }
}

/**
 * Adds the `uuid` of every line of the log from `from` on; returns where the last complete line ends.
 * A last line without its newline counts when it is a whole record (a writer killed between a record
 * and its newline): the next append's fence completes it, so it is in the log.
 */
function scanLogKeys(fd: number, from: number, size: number, keys: Set<string>): number {
  let offset = from;
  const buffer = Buffer.allocUnsafe(Math.max(0, Math.min(CHUNK_BYTES, size - from)));
  while (offset < size) {
    const chunk = readAt(fd, offset, Math.min(CHUNK_BYTES, size - offset), buffer);
    let end = chunk.lastIndexOf(10);
    let text: string;
    if (end >= 0) text = chunk.toString("utf8", 0, end + 1);
    else {
      // A line longer than a chunk (or the torn last line): read it whole, or stop at the torn end.
      const long = readAt(fd, offset, Math.min(size - offset, MAX_LINE_BYTES));
      end = long.indexOf(10);
      if (end < 0) {
        if (offset + long.length >= size) addKey(long.toString("utf8"), keys);
        break;
      }
      text = long.toString("utf8", 0, end + 1);
    }
    for (const line of text.split("\n")) if (line) addKey(line, keys);
    offset += end + 1;
  }
  return offset;
}

/**
 * Every key chats.jsonl holds, from the cache where it still matches the log (same bytes before the
 * position it covers) plus the lines after it; rebuilt from the whole log when it does not match. The
 * cache is `log-keys` (one key a line, appended to) and `log-keys.json` (the log position it covers, a
 * hash of the bytes before it, and how many bytes of `log-keys` hold its keys), so bringing it up to
 * date writes only the new keys.
 */
function allLogKeys(stateDir: string, logFd: number | undefined): { keys: Set<string>; end: number } {
  const keys = new Set<string>();
  if (logFd === undefined) return { keys, end: 0 };
  const size = fstatSync(logFd).size;
  const keysFile = join(stateDir, LOG_KEYS_FILE);
  const headerFile = join(stateDir, `${LOG_KEYS_FILE}.json`);
  let from = 0;
  let keysBytes = 0;
  try {
    const header = JSON.parse(readSmallFile(headerFile) ?? "") as {
      logEnd: number;
      logFingerprint: string;
      keysBytes: number;
    };
    const cached = readSmallFile(keysFile);
    if (
      cached !== undefined &&
      Buffer.byteLength(cached) >= header.keysBytes &&
      header.logEnd <= size &&
      fingerprint(logFd, header.logEnd) === header.logFingerprint
    ) {
      // Bytes past keysBytes were appended by a capture that died before its header: not trusted.
      for (const key of Buffer.from(cached).toString("utf8", 0, header.keysBytes).split("\n"))
        if (key) keys.add(key);
      from = header.logEnd;
      keysBytes = header.keysBytes;
    }
  } catch {
    // A missing or damaged cache is rebuilt below.
  }
  const added = new Set<string>();
  const end = scanLogKeys(logFd, from, size, added);
  const fresh = [...added].filter((key) => !keys.has(key) && !key.includes("\n"));
  for (const key of added) keys.add(key);
  if (from === 0 || end !== from || fresh.length) {
    // Rebuilt: every key, in a new file. Brought up to date: the new keys after the trusted bytes.
    const lines = (list: string[]) => Buffer.from(list.map((key) => `${key}\n`).join(""));
    let written: number;
    if (from === 0) {
      const all = lines([...keys].filter((key) => !key.includes("\n")));
      writeAtomically(keysFile, all.toString("utf8"));
      written = all.length;
    } else {
      const text = lines(fresh);
      const fd = openRegularFile(keysFile, constants.O_WRONLY);
      try {
        ftruncateSync(fd, keysBytes);
        writeAt(fd, text, keysBytes);
      } finally {
        closeSync(fd);
      }
      written = keysBytes + text.length;
    }
    const header = { logEnd: end, logFingerprint: fingerprint(logFd, end), keysBytes: written };
    writeAtomically(headerFile, JSON.stringify(header));
  }
  return { keys, end };
}

interface ReadProgress {
  end: number;
  skipping: boolean;
  oversized: number;
  deferred: boolean;
}

/**
 * Feeds the complete lines from `start` to the parser, CHUNK_BYTES at a time, until the file's end or
 * the deadline. A last line without its newline is still being written: it waits. A line longer than
 * MAX_LINE_BYTES is skipped to its newline, however many captures that takes.
 */
function readNewLines(
  fd: number,
  start: number,
  size: number,
  skipping: boolean,
  parser: TranscriptParser,
  deadline: number,
): ReadProgress {
  const progress: ReadProgress = { end: start, skipping, oversized: 0, deferred: false };
  const buffer = Buffer.allocUnsafe(Math.max(0, Math.min(CHUNK_BYTES, size - start)));
  while (progress.end < size) {
    if (Date.now() > deadline) {
      progress.deferred = true;
      break;
    }
    const chunk = readAt(fd, progress.end, Math.min(CHUNK_BYTES, size - progress.end), buffer);
    if (!chunk.length) break; // shrank while we read
    if (progress.skipping) {
      const newline = chunk.indexOf(10);
      progress.end += newline < 0 ? chunk.length : newline + 1;
      progress.skipping = newline < 0;
      continue;
    }
    const end = chunk.lastIndexOf(10);
    if (end >= 0) {
      parser.add(chunk.toString("utf8", 0, end + 1).split("\n"));
      progress.end += end + 1;
      continue;
    }
    // No newline in a whole chunk: one line longer than CHUNK_BYTES, or the unfinished last line.
    if (progress.end + chunk.length >= size) break;
    const long = readAt(fd, progress.end, Math.min(MAX_LINE_BYTES, size - progress.end));
    const newline = long.indexOf(10);
    if (newline >= 0) {
      parser.add([long.toString("utf8", 0, newline)]);
      progress.end += newline + 1;
    } else if (long.length < MAX_LINE_BYTES) break;
    else {
      progress.oversized++;
      progress.skipping = true;
      progress.end += long.length;
    }
  }
  return progress;
}

function openIfRegular(path: string): number | undefined {
  try {
    return openRegularFile(path, constants.O_RDONLY);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

const recent = (keys: Iterable<string>) => [...new Set(keys)].slice(-RECENT_KEYS);

/**
 * Captures the turns of one transcript that chats.jsonl does not hold yet: reads the transcript from
 * where this session's last capture stopped, parses it (`TranscriptParser`), redacts each turn, skips
 * every turn whose key the log already holds, and appends the rest in one write. With
 * `lastAssistantMessage` (the Stop hook's payload) that reply is stored too when the transcript does
 * not hold it yet. Any caller (the hooks, an import of old transcripts) may call it for any
 * transcript, any number of times, concurrently: under the project's chat-log lock, each turn reaches
 * the log once. Opens only regular files, reads in bounded chunks and stops reading after
 * `budgetMs`. A missing transcript is no error (`missing`); I/O errors throw and the caller fails open.
 */
export function captureTranscript(
  projectRoot: string,
  sessionId: string,
  transcriptPath: string,
  options: CaptureOptions = {},
): CaptureResult {
  const stateDir = captureStateDir(projectRoot);
  mkdirSync(openSessionsDir(projectRoot), { recursive: true });
  const stem = sessionFileStem(sessionId);
  const stateFile = join(stateDir, `${stem}.json`);
  const openMarker = join(openSessionsDir(projectRoot), `${stem}.json`);

  // Opened before the lock, and only when it is a regular file: a FIFO must never block, least of
  // all while the lock is held.
  const fd = openIfRegular(transcriptPath);
  // The first redact() of a non-empty text compiles the rules (~3 ms): when there is likely something
  // to redact (the transcript grew past the saved offset, read without the lock as a hint), that is
  // done before the lock rather than while other captures wait for it.
  if (fd !== undefined && fstatSync(fd).size > (readState(stateFile)?.offset ?? 0))
    redact("warm", { projectRoot });
  try {
    return withChatLogLock(
      projectRoot,
      "capture",
      () => {
        const deadline = Date.now() + (options.budgetMs ?? DEFAULT_BUDGET_MS);
        const result: CaptureResult = {
          appended: 0,
          skipped: 0,
          malformed: 0,
          oversized: 0,
          bytesRead: 0,
          reread: false,
          missing: fd === undefined,
          deferred: false,
          fromPayload: false,
        };
        const state = readState(stateFile);
        const size = fd === undefined ? 0 : fstatSync(fd).size;
        const resumable =
          state !== undefined &&
          state.transcript === transcriptPath &&
          state.offset <= size &&
          fingerprint(fd, state.offset) === state.fingerprint;
        const start = resumable ? state.offset : 0;
        result.reread = fd !== undefined && state !== undefined && !resumable;

        const parser = new TranscriptParser(resumable ? state.promptId : undefined);
        const progress =
          fd === undefined
            ? { end: 0, skipping: false, oversized: 0, deferred: false }
            : readNewLines(fd, start, size, resumable && state.skipping === true, parser, deadline);
        result.bytesRead = progress.end - start;
        result.malformed = parser.malformed;
        result.oversized = progress.oversized;
        result.deferred = progress.deferred;

        // What the log already holds. Resuming where this session stopped, only its tail since then
        // can hold turns of these bytes (appended by a capture that died before saving its state);
        // anything else (a first read, a re-read, reading below the furthest point read before, a log
        // rewritten meanwhile) needs every key of the log.
        const logFd = openIfRegular(chatLogPath(projectRoot));
        try {
          const logSize = logFd === undefined ? 0 : fstatSync(logFd).size;
          const tailValid =
            state !== undefined &&
            state.logEnd <= logSize &&
            fingerprint(logFd, state.logEnd) === state.logFingerprint;
          const onlyNewBytes = fd === undefined || (resumable && start > 0 && start >= state.highWater);
          let known: Set<string>;
          if (tailValid && onlyNewBytes) {
            known = new Set<string>();
            if (logFd !== undefined) scanLogKeys(logFd, state.logEnd, logSize, known);
          } else known = allLogKeys(stateDir, logFd).keys;

          // Replies stored from a payload, each claimable by one transcript part with the same text.
          const claimable = new Set([
            ...(state?.replies ?? []),
            ...[...known].filter((k) => k.startsWith("reply:")),
          ]);
          const seenParts: string[] = [...(state?.seenParts ?? [])];
          const records: ChatRecord[] = [];
          const append = (role: ChatRecord["role"], text: string, uuid: string, ts: string | undefined) => {
            const clean = redact(text, { projectRoot });
            const record: ChatRecord = {
              ts: ts ?? new Date().toISOString(),
              session_id: sessionId,
              role,
              text: clean.text,
              uuid,
            };
            if (clean.review) record.review = true;
            records.push(record);
            known.add(uuid);
          };

          for (const turn of parser.turns) {
            const partKeys =
              turn.role === "assistant" ? turn.parts.map((part) => replyKey(turn.promptId, part)) : [];
            seenParts.push(...partKeys);
            if (known.has(turn.uuid)) {
              result.skipped++;
              continue;
            }
            // A part stored earlier from the Stop payload is not stored again; the rest of the reply is.
            const parts = turn.parts.filter(
              (part, i) =>
                turn.role !== "assistant" ||
                !(claimable.delete(partKeys[i]) || claimable.delete(replyKey(undefined, part))),
            );
            if (!parts.length) {
              result.skipped++;
              continue;
            }
            append(turn.role, parts.join("\n\n"), turn.uuid, turn.timestamp);
          }

          const payload = options.lastAssistantMessage?.trim();
          let replies = [...claimable].filter((key) => state?.replies.includes(key));
          if (payload) {
            const key = replyKey(options.promptId, payload);
            if (!known.has(key) && !seenParts.includes(key) && !replies.includes(key)) {
              append("assistant", payload, key, undefined);
              replies.push(key);
              result.fromPayload = true;
            }
          }
          replies = recent(replies);

          // Log first, then state: a crash in between re-reads, and the log's tail tells what it holds.
          const logEnd = appendChatRecords(projectRoot, records);
          result.appended = records.length;
          const afterFd = logFd ?? openIfRegular(chatLogPath(projectRoot));
          try {
            const next: SessionState =
              fd === undefined && state !== undefined
                ? { ...state }
                : {
                    transcript: transcriptPath,
                    offset: progress.end,
                    fingerprint: fingerprint(fd, progress.end),
                    highWater: Math.max(
                      progress.end,
                      state?.transcript === transcriptPath ? state.highWater : 0,
                    ),
                    promptId: parser.promptId,
                    logEnd: 0,
                    logFingerprint: "0",
                    replies: [],
                    seenParts: [],
                  };
            if (progress.skipping) next.skipping = true;
            else delete next.skipping;
            next.logEnd = logEnd;
            next.logFingerprint = fingerprint(afterFd, logEnd);
            next.replies = replies;
            next.seenParts = recent(seenParts);
            // Unchanged (nothing new): not rewritten.
            if (JSON.stringify(next) !== JSON.stringify(state))
              writeAtomically(stateFile, JSON.stringify(next));
          } finally {
            if (afterFd !== undefined && afterFd !== logFd) closeSync(afterFd);
          }
        } finally {
          if (logFd !== undefined) closeSync(logFd);
        }

        const finished = options.ended && !result.missing && !result.deferred && progress.end >= size;
        if (finished) rmSync(openMarker, { force: true });
        else if (options.live && !existsSync(openMarker))
          writeFileSync(openMarker, JSON.stringify({ session_id: sessionId, transcript: transcriptPath }));
        return result;
      },
      options.lockWaitMs,
    );
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * SessionStart: earlier sessions of the project that never ended (a crash, a closed terminal,
 * `kill -9`: no SessionEnd ran) are captured up to their transcript's end. A caught-up session idle for
 * IDLE_AFTER_MS leaves the list; its next Stop puts it back. Returns how many records were appended.
 */
export function catchUpOpenSessions(projectRoot: string, budgetMs = DEFAULT_BUDGET_MS): number {
  const openDir = openSessionsDir(projectRoot);
  const deadline = Date.now() + budgetMs;
  let appended = 0;
  let names: string[];
  try {
    names = readdirSync(openDir);
  } catch (error) {
    if (isMissing(error)) return 0; // no session was ever live here
    throw error;
  }
  for (const name of names) {
    if (!name.endsWith(".json") || Date.now() > deadline) continue;
    const marker = join(openDir, name);
    let session: { session_id?: unknown; transcript?: unknown };
    try {
      session = JSON.parse(readSmallFile(marker) ?? "");
    } catch {
      rmSync(marker, { force: true }); // cut short by a crash: the session's next Stop writes it again
      continue;
    }
    const { session_id: sessionId, transcript } = session;
    if (typeof sessionId !== "string" || typeof transcript !== "string") continue;
    let modified: number;
    try {
      modified = statSync(transcript).mtimeMs;
    } catch {
      continue; // not written yet, or gone: nothing to read
    }
    const left = Math.max(0, deadline - Date.now());
    const result = captureTranscript(projectRoot, sessionId, transcript, {
      budgetMs: left,
      lockWaitMs: Math.min(1_000, left),
    });
    appended += result.appended;
    if (!result.deferred && !result.missing && Date.now() - modified > IDLE_AFTER_MS)
      rmSync(marker, { force: true });
  }
  return appended;
}
