/**
 * Browsing and curating a project's memory (the web page's sessions and chunks): what is stored, read
 * from the store recall reads (the local store, or the mirror of a shared one); pinning a chunk for
 * the prelude; correcting a line of a session's summary (forgetting a session is `forgetSession` of
 * forget.ts, as `triforge forget` calls it).
 */
import { indexLockPath, summaryPath } from "../home/paths.ts";
import { redact, strictEntropyPass } from "../privacy/index.ts";
import { openStoreForWrite } from "../store/open.ts";
import { chunkRole } from "./chunking.ts";
import { waitForLock } from "./lock.ts";
import { addPin, type Pin, readPins } from "./pins.ts";
import { recallStore } from "./recall/recall.ts";
import { writeSummaryFile } from "./summary.ts";

export interface SessionView {
  session_id: string;
  chunks: number;
  first_ts: string;
  last_ts: string;
  /** The session's summary entries, as summary.md has them ("" before the first index run). */
  summary: string;
  pinned: number;
}

export interface ChunkView {
  id: number;
  session_id: string;
  ts: string;
  role: string;
  text: string;
  pinned: boolean;
}

/** Characters of each chunk in a session's listing; `readChunk` gives the whole text. */
export const PREVIEW_CHARS = 280;

/**
 * Stored sessions, newest first (`limit` of them from `offset`; every one by default), from the store
 * recall reads: its chunks counted and timed by one grouped query, its summary entries joined; and
 * how many sessions there are. PERF: from the recall index's every chunk (text and turns of all of
 * them, kept by the server after) this cost a first page view 0.63 s at 16× LoCoMo.
 */
export async function listSessions(
  projectRoot: string,
  page: { limit?: number; offset?: number } = {},
): Promise<{ sessions: SessionView[]; total: number }> {
  const store = await recallStore(projectRoot);
  if (!store) return { sessions: [], total: 0 };
  const pins = await readPins(projectRoot);
  const listed = store.sessionList(page.limit ?? -1, page.offset ?? 0);
  const summaries = new Map<string, string>();
  for (const entry of store.summariesOf(listed.map((s) => s.sessionId)))
    summaries.set(
      entry.sessionId,
      [summaries.get(entry.sessionId), entry.text.trim()].filter(Boolean).join("\n"),
    );
  return {
    sessions: listed.map((s) => ({
      session_id: s.sessionId,
      chunks: s.chunks,
      first_ts: s.firstTs,
      last_ts: s.lastTs,
      summary: summaries.get(s.sessionId) ?? "",
      pinned: pins.filter((p) => p.session_id === s.sessionId).length,
    })),
    total: store.counts().sessions,
  };
}

/** A session's chunks in order, each cut to PREVIEW_CHARS, read from the store alone (not every chunk). */
export async function sessionChunks(projectRoot: string, sessionId: string): Promise<ChunkView[]> {
  const store = await recallStore(projectRoot);
  if (!store) return [];
  const pinned = new Set((await readPins(projectRoot)).map((p) => p.chunk_id));
  return store.chunksOfSession(sessionId).map((c) => ({
    id: c.id,
    session_id: c.sessionId,
    ts: c.ts,
    role: chunkRole(c.turns),
    text: c.text.length > PREVIEW_CHARS ? `${c.text.slice(0, PREVIEW_CHARS - 1)}…` : c.text,
    pinned: pinned.has(c.id),
  }));
}

/** One chunk whole, with its turns; undefined when no stored chunk has that id. */
export async function readChunk(
  projectRoot: string,
  id: number,
): Promise<(ChunkView & { turns: { role: string; ts: string; text: string }[] }) | undefined> {
  const chunk = (await recallStore(projectRoot))?.chunkById(id);
  if (!chunk) return undefined;
  return {
    id: chunk.id,
    session_id: chunk.sessionId,
    ts: chunk.ts,
    role: chunkRole(chunk.turns),
    text: chunk.text,
    pinned: (await readPins(projectRoot)).some((p) => p.chunk_id === id),
    turns: chunk.turns.map((t) => ({ role: t.role, ts: t.ts, text: chunk.text.slice(t.start, t.end) })),
  };
}

/** Pins a stored chunk for the prelude; undefined when no stored chunk has that id. */
export async function pinChunk(projectRoot: string, id: number): Promise<Pin | undefined> {
  const chunk = await readChunk(projectRoot, id);
  if (!chunk) return undefined;
  return addPin(projectRoot, {
    chunk_id: chunk.id,
    session_id: chunk.session_id,
    ts: chunk.ts,
    text: chunk.text,
  });
}

/** Longest summary line a person may write: a prelude entry is a few short lines. */
export const MAX_SUMMARY_LINE = 400;

/** A correction that cannot be stored as given (empty, too long, or shaped like an entry's header). */
export class SummaryEditError extends Error {}

export interface SummaryEdit {
  /** `busy`: an indexer held the project's lock; `unknown`: no entry of the session has that line. */
  status: "edited" | "busy" | "unknown";
  /** The line as stored: one line, redacted like everything captured. */
  text: string;
}

/**
 * Replaces one line of a session's summary (in the store, then summary.md, which the prelude reads),
 * under the index lock so it cannot race an indexer rewriting summary.md. The new text is a person's,
 * typed on the page: it is redacted as captured text is before it reaches disk.
 */
export async function editSummaryLine(
  projectRoot: string,
  sessionId: string,
  line: string,
  replacement: string,
): Promise<SummaryEdit> {
  const single = replacement.replace(/\s+/g, " ").trim();
  if (!single) throw new SummaryEditError("the new line is empty");
  if (single.length > MAX_SUMMARY_LINE)
    throw new SummaryEditError(`the new line is longer than ${MAX_SUMMARY_LINE} characters`);
  // `## ` begins an entry in summary.md: a line like it would forge an entry of another session.
  if (single.startsWith("#")) throw new SummaryEditError("a summary line cannot start with '#'");
  const redacted = redact(single, { projectRoot });
  const text = redacted.review ? strictEntropyPass(redacted.text).text : redacted.text;
  const lock = await waitForLock(indexLockPath(projectRoot), "edit summary");
  if (!lock) return { status: "busy", text };
  try {
    const store = openStoreForWrite(projectRoot);
    try {
      if ((await store.replaceSummaryLine(sessionId, line, text)) === 0) return { status: "unknown", text };
      writeSummaryFile(summaryPath(projectRoot), await store.summaries());
      return { status: "edited", text };
    } finally {
      store.close();
    }
  } finally {
    lock.release();
  }
}
