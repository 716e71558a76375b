/**
 * Capture: the new prose of a Claude Code transcript → the project's chat log, redacted.
 *
 * Runs after every agent reply (the `Stop` hook), so its cost must not grow with the transcript: it
 * keeps, per session, the byte offset it has read up to and reads only what was added since. Every
 * record is keyed by its transcript uuid, and the keys each session has written are kept beside the
 * offset, so a re-read (a truncated or replaced transcript, a lost offset) or a resumed session (whose
 * new transcript starts with a copy of the old one, uuids and all) never writes a line twice.
 *
 * Per-session state in `projectDataDir(root)/capture/`:
 *   `<session>.json`  {transcript, offset, fingerprint, keysBytes}: where to resume.
 *   `<session>.keys`  one key a line, append-only: what this session already wrote to chats.jsonl.
 */
import {
  appendFileSync,
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { captureStateDir } from "../home/paths.ts";
import { redact } from "../privacy/index.ts";
import { appendChatRecords, type ChatRecord, withChatLogLock } from "./chatlog.ts";
import { parseTranscript } from "./transcript.ts";

/** What the hook passes on stdin (Claude Code's common hook input, the fields capture uses). */
export interface HookInput {
  session_id: string;
  transcript_path: string;
  cwd?: string;
  hook_event_name?: string;
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
  const { session_id, transcript_path, cwd, hook_event_name } = input as Record<string, unknown>;
  if (typeof session_id !== "string" || !session_id) throw new Error("hook input has no session_id");
  if (typeof transcript_path !== "string" || !transcript_path)
    throw new Error("hook input has no transcript_path");
  return {
    session_id,
    transcript_path,
    cwd: typeof cwd === "string" ? cwd : undefined,
    hook_event_name: typeof hook_event_name === "string" ? hook_event_name : undefined,
  };
}

export interface CaptureResult {
  /** Records appended to chats.jsonl. */
  appended: number;
  /** Turns already in the log (a re-read), not written again. */
  skipped: number;
  /** Transcript lines that were not JSON. */
  malformed: number;
  /** Transcript bytes read (complete lines only). */
  bytesRead: number;
  /** The transcript shrank, was replaced or moved: it was read again from the start. */
  reread: boolean;
}

interface SessionState {
  transcript: string;
  /** Bytes of the transcript already captured: always the end of a complete line. */
  offset: number;
  /** Hash of the FINGERPRINT_BYTES before `offset`: tells an appended file from a replaced one. */
  fingerprint: string;
  /** Length of `<session>.keys` after the last capture; more means a capture died before saving state. */
  keysBytes: number;
}

/**
 * Bytes before the offset that must be unchanged for the transcript to count as the same file, only
 * longer. A transcript is append-only, so a difference here means it was rewritten or replaced.
 */
const FINGERPRINT_BYTES = 4096;

const KEYS_SUFFIX = ".keys";

/** A session id from stdin becomes a file name: keep it one path segment, whatever it holds. */
function sessionFileStem(sessionId: string): string {
  return /^[\w.-]{1,128}$/.test(sessionId) && !/^\.+$/.test(sessionId)
    ? sessionId
    : `session-${Bun.hash(sessionId).toString(16)}`;
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done === length ? buffer : buffer.subarray(0, done);
}

function fingerprint(fd: number, end: number): string {
  const start = Math.max(0, end - FINGERPRINT_BYTES);
  return Bun.hash(readAt(fd, start, end - start)).toString(16);
}

function readState(file: string): SessionState | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const state = JSON.parse(raw) as SessionState;
    if (
      typeof state.offset === "number" &&
      typeof state.fingerprint === "string" &&
      typeof state.keysBytes === "number"
    )
      return state;
  } catch {
    // A damaged state file only costs a re-read; the keys file prevents duplicates.
  }
  return undefined;
}

/** Written beside and renamed over: a reader sees the old state or the new one, never half. */
function writeState(file: string, state: SessionState): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(state));
  renameSync(temporary, file);
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Adds the keys written from byte `from` of a keys file on. */
function readKeys(file: string, from: number, keys = new Set<string>()): Set<string> {
  if (fileSize(file) <= from) return keys;
  const fd = openSync(file, "r");
  try {
    const text = readAt(fd, from, fstatSync(fd).size - from).toString("utf8");
    for (const key of text.split("\n")) if (key) keys.add(key);
  } finally {
    closeSync(fd);
  }
  return keys;
}

/**
 * Every key any session of the project wrote. Read when a transcript is read from its start (once per
 * session, and on a re-read): `claude --resume` starts the new session's transcript with the old
 * session's records, same uuids, and those are already in the log.
 */
function readProjectKeys(stateDir: string): Set<string> {
  const keys = new Set<string>();
  for (const name of readdirSync(stateDir))
    if (name.endsWith(KEYS_SUFFIX)) readKeys(join(stateDir, name), 0, keys);
  return keys;
}

/**
 * Appends the turns added to `transcriptPath` since this session's last capture to the project's
 * chats.jsonl, redacted. Only complete lines are read: a line the CLI is still writing is left for
 * the next capture. Holds the project's chat-log lock throughout, so concurrent captures of one
 * session (or of several) neither interleave nor repeat. Throws on I/O errors; the caller fails open.
 */
export function captureTranscript(
  projectRoot: string,
  sessionId: string,
  transcriptPath: string,
): CaptureResult {
  const stateDir = captureStateDir(projectRoot);
  mkdirSync(stateDir, { recursive: true });
  const stem = join(stateDir, sessionFileStem(sessionId));
  const stateFile = `${stem}.json`;
  const keysFile = `${stem}${KEYS_SUFFIX}`;

  return withChatLogLock(projectRoot, "capture", () => {
    const result: CaptureResult = { appended: 0, skipped: 0, malformed: 0, bytesRead: 0, reread: false };
    const fd = openSync(transcriptPath, "r");
    try {
      const size = fstatSync(fd).size;
      const state = readState(stateFile);
      const resumable =
        state !== undefined &&
        state.transcript === transcriptPath &&
        state.offset <= size &&
        fingerprint(fd, state.offset) === state.fingerprint;
      const start = resumable ? state.offset : 0;
      result.reread = state !== undefined && !resumable;
      if (start >= size) return result;

      const added = readAt(fd, start, size - start);
      const lastNewline = added.lastIndexOf(10);
      if (lastNewline < 0) return result;
      result.bytesRead = lastNewline + 1;
      const { turns, malformed } = parseTranscript(added.toString("utf8", 0, lastNewline + 1));
      result.malformed = malformed;

      // Resuming, the session's keys file normally ends where the state says; anything past it was
      // written by a capture that died before saving its offset. Read from the start, a transcript
      // may repeat any session's turns.
      const known = resumable ? readKeys(keysFile, state.keysBytes) : readProjectKeys(stateDir);
      const records: ChatRecord[] = [];
      for (const turn of turns) {
        if (known.has(turn.uuid)) {
          result.skipped++;
          continue;
        }
        known.add(turn.uuid);
        const clean = redact(turn.text, { projectRoot });
        const record: ChatRecord = {
          ts: turn.timestamp ?? new Date().toISOString(),
          session_id: sessionId,
          role: turn.role,
          text: clean.text,
          uuid: turn.uuid,
        };
        if (clean.review) record.review = true;
        records.push(record);
      }
      // Log first, then keys, then offset: a crash in between can re-read but not lose a turn.
      appendChatRecords(projectRoot, records);
      if (records.length) appendFileSync(keysFile, records.map((r) => `${r.uuid}\n`).join(""));
      result.appended = records.length;
      const offset = start + lastNewline + 1;
      writeState(stateFile, {
        transcript: transcriptPath,
        offset,
        fingerprint: fingerprint(fd, offset),
        keysBytes: fileSize(keysFile),
      });
      return result;
    } finally {
      closeSync(fd);
    }
  });
}
