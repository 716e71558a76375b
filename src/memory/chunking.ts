import { createHash } from "node:crypto";
import type { Chunk, Turn } from "../store/types.ts";
import type { ChatRecord } from "./chatlog.ts";

/** Between turns in a chunk's text: a paragraph break keeps sentences of different speakers apart. */
export const TURN_SEPARATOR = "\n\n";

/**
 * Parses one `chats.jsonl` line; undefined for a line that is not a usable record (the caller logs it).
 * A record without a uuid gets one derived from its content, so re-reading it dedupes the same way.
 */
export function parseRecord(line: string): ChatRecord | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof raw !== "object" || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  if (r.role !== "user" && r.role !== "assistant") return undefined;
  if (typeof r.text !== "string" || typeof r.session_id !== "string" || !r.session_id) return undefined;
  const ts = typeof r.ts === "string" ? r.ts : "";
  const uuid =
    typeof r.uuid === "string" && r.uuid
      ? r.uuid
      : createHash("sha256")
          .update(`${r.session_id}\0${ts}\0${r.role}\0${r.text}`)
          .digest("hex")
          .slice(0, 32);
  return {
    ts,
    session_id: r.session_id,
    role: r.role,
    text: r.text,
    uuid,
    ...(r.review === true ? { review: true } : {}),
  };
}

/**
 * Groups records into chunks, per session, in time order (file order for equal times): each user turn
 * opens a chunk and the assistant turns after it (in the same session) join it. Assistant turns with no user turn before them in this
 * batch form a chunk of their own. Deterministic in the records, so re-chunking the same records (after
 * a crash) yields the same hashes. A group longer than MAX_CHUNK_CHARS is cut at turn boundaries.
 */
export function chunkRecords(records: ChatRecord[]): Chunk[] {
  const open = new Map<string, ChatRecord[]>();
  const groups: ChatRecord[][] = [];
  for (const record of inTimeOrder(records)) {
    if (!record.text.trim()) continue;
    const current = open.get(record.session_id);
    if (record.role === "user" || !current) {
      const group = [record];
      groups.push(group);
      open.set(record.session_id, group);
    } else current.push(record);
  }
  return groups.flatMap((group) => splitLongGroup(group).map(makeChunk));
}

/**
 * The records with each session's own records in time order, in the slots that session held (so
 * sessions stay interleaved as in the file). A reply taken from a Stop payload can be written before
 * its prompt: Claude Code 2.1.197 runs the Stop hook before the transcript holds the turn, and the
 * prompt arrives with the SessionEnd catch-up. File order breaks ties.
 */
function inTimeOrder(records: ChatRecord[]): ChatRecord[] {
  const slots = new Map<string, number[]>();
  records.forEach((record, i) => {
    const list = slots.get(record.session_id);
    if (list) list.push(i);
    else slots.set(record.session_id, [i]);
  });
  const ordered = records.slice();
  for (const indices of slots.values()) {
    const sorted = indices.slice().sort((a, b) => {
      const [x, y] = [records[a].ts, records[b].ts];
      return x < y ? -1 : x > y ? 1 : a - b;
    });
    indices.forEach((slot, k) => {
      ordered[slot] = records[sorted[k]];
    });
  }
  return ordered;
}

/**
 * Most characters a chunk of several turns may hold. The embedder reads at most 512 tokens (about 2,000
 * characters of English prose; docs/embed.md), so the tail of a longer chunk is invisible to dense search,
 * and one user turn followed by dozens of replies made one 10 KB chunk that recall returned whole.
 * A single turn longer than this stays whole: chunks are cut at turn boundaries only.
 */
export const MAX_CHUNK_CHARS = 2_000;

/**
 * Cuts an over-long group of turns into consecutive runs of whole turns, each within MAX_CHUNK_CHARS
 * (counting the separators), filled greedily in order. A function of the records alone, so the pieces
 * and their hashes are the same on every run; a group that fits is returned as it is (its hash unchanged).
 */
export function splitLongGroup(records: ChatRecord[]): ChatRecord[][] {
  const pieces: ChatRecord[][] = [];
  let piece: ChatRecord[] = [];
  let length = 0;
  for (const record of records) {
    const added = record.text.trim().length + (piece.length ? TURN_SEPARATOR.length : 0);
    if (piece.length && length + added > MAX_CHUNK_CHARS) {
      pieces.push(piece);
      piece = [];
      length = 0;
    }
    length += record.text.trim().length + (piece.length ? TURN_SEPARATOR.length : 0);
    piece.push(record);
  }
  if (piece.length) pieces.push(piece);
  return pieces;
}

function makeChunk(records: ChatRecord[]): Chunk {
  const turns: Turn[] = [];
  let text = "";
  for (const r of records) {
    if (text) text += TURN_SEPARATOR;
    const start = text.length;
    text += r.text.trim();
    turns.push({ uuid: r.uuid, role: r.role, ts: r.ts, start, end: text.length });
  }
  const hash = createHash("sha256");
  hash.update(records[0].session_id);
  for (const r of records) hash.update(`\0${r.uuid}\0${r.role}\0${r.text}`);
  return {
    hash: hash.digest("hex").slice(0, 32),
    sessionId: records[0].session_id,
    ts: records[0].ts,
    text,
    turns,
  };
}

/** The roles a chunk holds, as shown in recall hits: `user`, `assistant` or `user+assistant`. */
export function chunkRole(turns: { role: string }[]): string {
  const roles = [...new Set(turns.map((t) => t.role))];
  return roles.join("+");
}
