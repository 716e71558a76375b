/**
 * The turns of another agent's session (Codex, Cursor, OpenCode) → the project's chats.jsonl, through
 * the same redaction and the same chat-log lock as Claude Code's capture.
 *
 * Each source names every turn with a key that stays the same however often the session is read (the
 * rollout line it came from, the message id), and that key is the record's `uuid`. A key chats.jsonl
 * already holds is never written again, so importing twice, importing while a hook captures, or a hook
 * that re-reads a whole session after every turn, never duplicates a record.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { chatLogPath } from "../../home/paths.ts";
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
  const buffer = Buffer.allocUnsafe(to - from);
  const fd = openSync(path, "r");
  try {
    let done = 0;
    while (done < buffer.length) {
      const n = readSync(fd, buffer, done, buffer.length - done, from + done);
      if (n === 0) break;
      done += n;
    }
    return buffer.subarray(0, done);
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
  if (size > known.read) {
    const added = readFrom(path, known.read, size);
    // Only complete lines count: a torn last line is not a record (yet).
    const end = added.lastIndexOf(10) + 1;
    for (const match of added.toString("utf8", 0, end).matchAll(UUID_FIELD))
      known.keys.add(JSON.parse(`"${match[1]}"`));
    known.read += end;
  }
  return known.keys;
}

/**
 * Appends the turns chats.jsonl does not hold yet, redacted, in one write under the chat-log lock.
 * Throws on I/O errors and when the lock cannot be had (the caller logs; nothing was written).
 */
export function appendTurns(projectRoot: string, sessionId: string, turns: SourceTurn[]): AppendResult {
  if (!turns.length) return { appended: 0, skipped: 0 };
  return withChatLogLock(projectRoot, "import", () => {
    const known = knownKeys(projectRoot);
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
  });
}
