/**
 * Forgetting one chunk (the web page's Delete, `triforge forget --chunk`), with `forget`'s exactness: in
 * the store its graph weight, turns and cached LLM results, and the lines its session's summary quoted
 * from it (one transaction, `MemoryStore.forgetChunk`); the chats.jsonl records it was made of, rewritten
 * under the chat-log lock and remembered as forgotten, so no rescan indexes them again; its pin;
 * summary.md and the recall snapshot. All under the index lock that the indexer and `forget` hold.
 */
import { indexLockPath } from "../home/paths.ts";
import { hasStore, openStoreForWrite } from "../store/open.ts";
import type { ForgetResult } from "../store/types.ts";
import { refreshAfterForget, removeChatLogLines } from "./forget.ts";
import { waitForLock } from "./lock.ts";
import { removePin } from "./pins.ts";

/** How long a delete waits for a running indexer to finish before giving up (as forget does). */
const LOCK_WAIT_MS = 15_000;
/** A summary line shorter than this is not traced to a chunk: a few words occur in many texts. */
const MIN_QUOTE_CHARS = 16;

export interface ChunkForgetReport extends ForgetResult {
  /** `busy`: an indexer held the lock; `unknown`: no stored chunk has that id. */
  status: "forgotten" | "busy" | "unknown";
  session_id?: string;
  /** Records removed from chats.jsonl. */
  lines: number;
  /** Lines removed from the session's summary entries. */
  summaryLines: number;
  /** 1 when the chunk was pinned (the pin is dropped with it). */
  pins: number;
  /** With a shared store: deleted there too, or `pending` (unreachable: the next index run deletes it there). */
  shared?: "forgotten" | "pending";
}

const squeeze = (text: string) => text.replace(/\s+/g, " ").trim().toLowerCase();

/**
 * The summary entry `entry` without what it quotes from the removed chunk's text and from no other chunk
 * of the session: a line whose sentence is the removed chunk's (the extractive summary's "Discussed:",
 * its notes and "Decided:" items, clipped with "…"), and the names on "Files:" / "Identifiers:" lines that
 * only it mentions. An LLM's paraphrase cannot be traced to one chunk and stays (the page edits it).
 * "" when nothing but headings is left.
 */
export function summaryWithout(entry: string, removed: string, kept: string[]): string {
  const gone = squeeze(removed);
  const others = kept.map(squeeze);
  const onlyInRemoved = (quote: string) => {
    const q = squeeze(quote);
    return q !== "" && gone.includes(q) && !others.some((text) => text.includes(q));
  };
  const out: string[] = [];
  for (const line of entry.split("\n")) {
    const list = /^(\s*(?:Files|Identifiers):\s*)(.*)$/.exec(line);
    if (list) {
      const names = list[2].split(", ").filter((name) => name && !onlyInRemoved(name));
      if (names.length) out.push(list[1] + names.join(", "));
      continue;
    }
    if (isQuoteOf(line, onlyInRemoved)) continue;
    out.push(line);
  }
  // A "Decided:" heading whose items all went goes with them.
  const lines = out.filter((line, i) => !(line.trim() === "Decided:" && !/^\s*- /.test(out[i + 1] ?? "")));
  const hasContent = lines.some((line) => line.trim() && !/^\s*(?:Discussed|Decided):\s*$/.test(line));
  return hasContent ? lines.join("\n") : "";
}

/** Whether a summary line is a sentence quoted from the removed chunk (with or without its labels). */
function isQuoteOf(line: string, onlyInRemoved: (quote: string) => boolean): boolean {
  let body = line
    .trim()
    .replace(/^(?:Discussed|Decided):\s*/, "")
    .replace(/^- /, "")
    .replace(/…$/, "");
  const why = body.indexOf(" (why: ");
  if (why > 0) body = body.slice(0, why);
  if (body.length < MIN_QUOTE_CHARS) return false;
  // A note may be headed by its speaker's name ("Mel: …"), which the chunk's text does not hold.
  const unnamed = body.replace(/^[^\s:]{1,40}: /, "");
  return (
    onlyInRemoved(body) || (unnamed !== body && unnamed.length >= MIN_QUOTE_CHARS && onlyInRemoved(unnamed))
  );
}

/** Whether a chats.jsonl line is one of `uuids` (unreadable lines are kept: they are not ours to drop). */
function isRecordOf(line: string, uuids: Set<string>): boolean {
  try {
    const uuid = (JSON.parse(line) as { uuid?: unknown }).uuid;
    return typeof uuid === "string" && uuids.has(uuid);
  } catch {
    return false;
  }
}

/** Rewrites chats.jsonl without the records `uuids`, under the chat-log lock capture appends under. */
function removeRecordLines(projectRoot: string, uuids: Set<string>): number {
  return uuids.size ? removeChatLogLines(projectRoot, (line) => isRecordOf(line, uuids)) : 0;
}

export async function forgetChunk(projectRoot: string, chunkId: number): Promise<ChunkForgetReport> {
  const empty = {
    chunks: 0,
    facts: 0,
    entities: 0,
    edgesRemoved: 0,
    edgesLowered: 0,
    lines: 0,
    summaryLines: 0,
    pins: 0,
  };
  // With a shared store the page lists the mirror's chunks (every machine's) by their shared row ids:
  // the id names the records, which this machine's store may hold under another id, or not at all.
  const { mirroredChunk, forgetRecordsInShared } = await import("./shared.ts");
  const mirrored = await mirroredChunk(projectRoot, chunkId);
  // No store yet, nothing to delete: and none is created just to say so.
  if (!hasStore(projectRoot) && !mirrored) return { status: "unknown", ...empty };
  const lock = await waitForLock(indexLockPath(projectRoot), "forget", LOCK_WAIT_MS);
  if (!lock) return { status: "busy", ...empty };
  try {
    const localId = mirrored ? mirrored.localId : chunkId;
    const here = localId === undefined ? undefined : await forgetChunkHere(projectRoot, localId);
    if (!mirrored) return here ?? { status: "unknown", ...empty };
    const shared = await forgetRecordsInShared(projectRoot, mirrored.uuids, summaryWithout);
    return { ...empty, ...here, status: "forgotten", session_id: mirrored.sessionId, shared };
  } finally {
    lock.release();
  }
}

/**
 * Deletes the chunk from this machine's store, chats.jsonl, pins, summary.md and recall snapshot; the
 * caller holds the index lock (forgetChunk, or the indexer applying a Delete made on another machine).
 */
export async function forgetChunkHere(
  projectRoot: string,
  chunkId: number,
): Promise<ChunkForgetReport | undefined> {
  if (!hasStore(projectRoot)) return undefined;
  const store = openStoreForWrite(projectRoot);
  try {
    const result = await store.forgetChunk(chunkId, summaryWithout);
    if (!result) return undefined;
    const { sessionId, uuids, summaryLines, ...removed } = result;
    const lines = removeRecordLines(projectRoot, new Set(uuids));
    const pins = removePin(projectRoot, chunkId) ? 1 : 0;
    await refreshAfterForget(projectRoot, store, lines, "forget chunk");
    return { status: "forgotten", session_id: sessionId, ...removed, lines, summaryLines, pins };
  } finally {
    store.close();
  }
}
