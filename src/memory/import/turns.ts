/**
 * The turns of another agent's session (Codex, Cursor, OpenCode) → the project's chats.jsonl, through
 * the same redaction and the same chat-log lock as Claude Code's capture.
 *
 * Each source names every turn with a key that stays the same however often the session is read (the
 * rollout line it came from, the message id), and that key is the record's `uuid`. A key chats.jsonl
 * already holds is never written again, so importing twice, importing while a hook captures, or a hook
 * that re-reads a whole session after every turn, never duplicates a record.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readAt } from "../../home/file-io.ts";
import { agentCaptureStateDir, chatLogPath } from "../../home/paths.ts";
import { redact } from "../../privacy/index.ts";
import { appendChatRecords, type ChatRecord, withChatLogLock } from "../chatlog.ts";
import type { Role } from "../transcript.ts";

/** One turn of a session in another agent's format, already reduced to prose. */
export interface SourceTurn {
  /** Stable across reads: `<agent>:<session>:<line>` or `<agent>:<message id>`. */
  key: string;
  role: Role;
  text: string;
  /** ISO 8601: when it was said, or the session file's last change when the format has no times. */
  ts: string;
  /** Taken from a hook payload before the agent wrote it to its own storage (where it turns up later). */
  ahead?: true;
}

export interface AppendResult {
  /** Records written to chats.jsonl. */
  appended: number;
  /** Turns whose key chats.jsonl already held. */
  skipped: number;
}

/** A record's key as JSON.stringify writes it: inside a string value every quote is escaped, so this only matches the field. */
const UUID_FIELD = /"uuid":"((?:[^"\\]|\\.)*)"/g;

/** Keys already in a project's chats.jsonl, and how many bytes of which file were read for them. */
interface KnownKeys {
  /** The file's inode: whatever rewrites chats.jsonl writes a new file and renames it over. */
  inode: number;
  read: number;
  keys: Set<string>;
}

/** Per process: an import appends session after session and reads only what was added since. */
const knownByLog = new Map<string, KnownKeys>();

function readFrom(path: string, from: number, to: number): Buffer {
  const fd = openSync(path, "r");
  try {
    return readAt(fd, from, to - from);
  } finally {
    closeSync(fd);
  }
}

/** Every key chats.jsonl holds. Called under the chat-log lock, so nothing appends meanwhile. */
function knownKeys(projectRoot: string): Set<string> {
  const path = chatLogPath(projectRoot);
  const stat = statSync(path, { throwIfNoEntry: false });
  const size = stat?.size ?? 0;
  const inode = stat?.ino ?? 0;
  let known = knownByLog.get(path);
  // Another file (forget and the review clean-up rename a rewritten copy over it) or a shorter one:
  // read it all again.
  if (known && (known.inode !== inode || size < known.read)) known = undefined;
  known ??= { inode, read: 0, keys: new Set() };
  knownByLog.set(path, known);
  if (size > known.read) known.read += addKeys(readFrom(path, known.read, size), known.keys);
  return known.keys;
}

/** Adds the keys of the complete lines in `bytes` of chats.jsonl; returns how many bytes those lines take. */
function addKeys(bytes: Buffer, keys: Set<string>): number {
  // Only complete lines count: a torn last line is not a record (yet).
  const end = bytes.lastIndexOf(10) + 1;
  for (const match of bytes.toString("utf8", 0, end).matchAll(UUID_FIELD))
    keys.add(JSON.parse(`"${match[1]}"`));
  return end;
}

/**
 * Appends the turns chats.jsonl does not hold yet, redacted, in one write under the chat-log lock.
 * Throws on I/O errors and when the lock cannot be had (the caller logs; nothing was written).
 */
export function appendTurns(projectRoot: string, sessionId: string, turns: SourceTurn[]): AppendResult {
  if (!turns.length) return { appended: 0, skipped: 0 };
  return withChatLogLock(projectRoot, "import", () =>
    appendUnknown(projectRoot, sessionId, turns, knownKeys(projectRoot)),
  );
}

/** Redacts and appends the turns whose key is not in `known` (adding theirs). The caller holds the lock. */
function appendUnknown(
  projectRoot: string,
  sessionId: string,
  turns: SourceTurn[],
  known: Set<string>,
): AppendResult {
  const records: ChatRecord[] = [];
  let skipped = 0;
  for (const turn of turns) {
    if (known.has(turn.key)) {
      skipped++;
      continue;
    }
    known.add(turn.key);
    const clean = redact(turn.text, { projectRoot });
    const record: ChatRecord = {
      ts: turn.ts,
      session_id: sessionId,
      role: turn.role,
      text: clean.text,
      uuid: turn.key,
    };
    if (clean.review) record.review = true;
    records.push(record);
  }
  appendChatRecords(projectRoot, records);
  return { appended: records.length, skipped };
}

/** Where a reader stopped in a session (agent-specific JSON), so the next hook reads only what was added. */
export type ResumePoint = Record<string, unknown>;

/** What a reader found: the session's turns past `resume` (or all of them), and where to resume next. */
export interface SessionRead {
  turns: SourceTurn[];
  resume?: ResumePoint;
  /** Read from the start (no resume point, or the file was replaced): earlier turns may be among them. */
  whole: boolean;
}

/** `agent-capture/<agent>-<session>.json`: what this session's hook already did. */
interface HookState {
  /** chats.jsonl right after this session's last append: inode and size. */
  logInode: number;
  logSize: number;
  /**
   * Keys stored ahead of the session's own storage (a Codex reply taken from the Stop payload): they
   * turn up later past the resume point, and must be known then.
   */
  ahead: string[];
  resume?: ResumePoint;
}

/** Keys kept ahead at most: a reply the agent never writes to its storage must not grow the state forever. */
const MAX_AHEAD = 64;

function readHookState(file: string): HookState | undefined {
  try {
    const state = JSON.parse(readFileSync(file, "utf8")) as HookState;
    if (typeof state.logInode === "number" && typeof state.logSize === "number" && Array.isArray(state.ahead))
      return state;
  } catch {
    // Missing or damaged: the hook reads the session whole and checks every key chats.jsonl holds.
  }
  return undefined;
}

/** A session id from a payload becomes a file name: one path segment, whatever it holds. */
function stateFile(projectRoot: string, agent: string, sessionId: string): string {
  const stem =
    /^[\w.-]{1,128}$/.test(sessionId) && !/^\.+$/.test(sessionId)
      ? sessionId
      : Bun.hash(sessionId).toString(36);
  return join(agentCaptureStateDir(projectRoot), `${agent}-${stem}.json`);
}

/**
 * What a capture hook appends after each turn: the turns `read` finds past the session's resume point,
 * those chats.jsonl does not hold yet. The cost follows what was added, not the session's or the log's
 * size: turns past the resume point are new, except those a hook that died before saving its state
 * already appended, which lie in the part of chats.jsonl written since this session's last append, the
 * only part scanned, and the keys stored ahead of the agent's storage, kept in the state. A read from
 * the start (no state, a replaced file) or a rewritten chats.jsonl is checked against every key the log
 * holds. Everything happens under the chat-log lock.
 */
export function captureSessionTurns(
  projectRoot: string,
  agent: string,
  sessionId: string,
  read: (resume: ResumePoint | undefined) => SessionRead,
): AppendResult {
  return withChatLogLock(projectRoot, "capture-agent", () => {
    const file = stateFile(projectRoot, agent, sessionId);
    const log = chatLogPath(projectRoot);
    const state = readHookState(file);
    const before = statSync(log, { throwIfNoEntry: false });
    const resumable =
      state !== undefined &&
      before !== undefined &&
      before.ino === state.logInode &&
      before.size >= state.logSize;
    const session = read(resumable ? state.resume : undefined);
    let known: Set<string>;
    if (resumable && !session.whole) {
      known = new Set(state.ahead);
      if (before.size > state.logSize) addKeys(readFrom(log, state.logSize, before.size), known);
    } else known = knownKeys(projectRoot);
    const result = appendUnknown(projectRoot, sessionId, session.turns, known);
    const ahead = new Set(resumable ? state.ahead : []);
    for (const turn of session.turns) {
      if (turn.ahead) ahead.add(turn.key);
      else ahead.delete(turn.key);
    }
    const after = statSync(log, { throwIfNoEntry: false });
    const next: HookState = {
      logInode: after?.ino ?? 0,
      logSize: after?.size ?? 0,
      ahead: [...ahead].slice(-MAX_AHEAD),
      resume: session.resume,
    };
    mkdirSync(agentCaptureStateDir(projectRoot), { recursive: true });
    // Written beside and renamed over: a reader sees the old state or the new one, never half.
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(next));
    renameSync(temporary, file);
    return result;
  });
}
