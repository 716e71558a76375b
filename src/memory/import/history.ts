/**
 * Import of a project's existing history: every past session of every supported agent that happened
 * in the project, appended to its chats.jsonl with the same parser, redaction and keys as live capture.
 * Running it twice, or while hooks capture, writes nothing twice (see ./turns.ts and ../capture.ts).
 */
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logError } from "../../home/log.ts";
import { agentCaptureStateDir, chatLogPath } from "../../home/paths.ts";
import { isStoreDamage, openStoreForRead } from "../../store/open.ts";
import { findClaudeSessions, importClaudeSession } from "./claude.ts";
import { codexHookRead, codexSessionAt, findCodexSessions, findRollout, readCodexSession } from "./codex.ts";
import {
  cursorHookRead,
  cursorSessionAt,
  findCursorSessions,
  findCursorTranscript,
  readCursorSession,
} from "./cursor.ts";
import {
  findOpencodeSession,
  findOpencodeSessions,
  opencodeHookRead,
  readOpencodeSession,
} from "./opencode.ts";
import { type AgentHome, type FoundSession, SOURCE_AGENTS, type SourceAgent } from "./sessions.ts";
import { type AppendResult, appendTurns, captureSessionTurns } from "./turns.ts";

const FINDERS: Record<SourceAgent, (root: string, where: AgentHome) => FoundSession[]> = {
  claude: findClaudeSessions,
  codex: findCodexSessions,
  cursor: findCursorSessions,
  opencode: findOpencodeSessions,
};

/** The project's past sessions of `agents`, changed on or after `sinceMs` when given, oldest first. */
export function findSessions(
  root: string,
  where: AgentHome,
  agents: readonly SourceAgent[] = SOURCE_AGENTS,
  sinceMs?: number,
): FoundSession[] {
  return (
    agents
      .flatMap((agent) => FINDERS[agent](root, where))
      .filter((s) => sinceMs === undefined || s.modifiedMs >= sinceMs)
      // Oldest first: the log reads in the order things were said, as if captured live.
      .sort((a, b) => a.modifiedMs - b.modifiedMs)
  );
}

/** Appends one session's turns that chats.jsonl does not hold yet. */
export function importSession(root: string, session: FoundSession): AppendResult {
  switch (session.agent) {
    case "claude":
      return importClaudeSession(root, session);
    case "codex":
      return appendTurns(root, session.sessionId, readCodexSession(session));
    case "cursor":
      return appendTurns(root, session.sessionId, readCursorSession(session));
    case "opencode":
      return appendTurns(root, session.sessionId, readOpencodeSession(session));
  }
}

/**
 * Sessions `triforge forget` removed: they stay out for good (the indexer skips them too), so their
 * text does not come back to disk through an import or a hook. A damaged store forgets nothing here.
 */
async function forgottenSessions(root: string): Promise<Set<string>> {
  let store: ReturnType<typeof openStoreForRead>;
  try {
    store = openStoreForRead(root);
    const here = store ? await store.forgottenSessions() : new Set<string>();
    // With a shared store, a session forgotten on another machine stays out too (the mirror's list).
    const { mirrorForgottenSessions } = await import("../shared.ts");
    for (const id of mirrorForgottenSessions(root)) here.add(id);
    return here;
  } catch (error) {
    if (isStoreDamage(error)) return new Set();
    throw error;
  } finally {
    store?.close();
  }
}

export interface ImportReport {
  sessions: number;
  bytes: number;
  appended: number;
  skipped: number;
  /** Sessions per agent, for the one-line report. */
  byAgent: Partial<Record<SourceAgent, number>>;
  /** Sessions that could not be read (logged to errors.log); the others were imported. */
  failed: number;
  /** Sessions left out because `triforge forget` removed them. */
  forgotten: number;
  ms: number;
}

export interface ImportOptions {
  agents?: readonly SourceAgent[];
  sinceMs?: number;
  /** After each session: how many are done, of how many. */
  onProgress?: (done: number, total: number) => void;
}

export async function importHistory(
  root: string,
  where: AgentHome,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const started = performance.now();
  const forgotten = await forgottenSessions(root);
  const found = findSessions(root, where, options.agents, options.sinceMs);
  const sessions = found.filter((s) => !forgotten.has(s.sessionId));
  const report: ImportReport = {
    sessions: 0,
    bytes: 0,
    appended: 0,
    skipped: 0,
    byAgent: {},
    failed: 0,
    forgotten: found.length - sessions.length,
    ms: 0,
  };
  sessions.forEach((session, index) => {
    try {
      const result = importSession(root, session);
      report.appended += result.appended;
      report.skipped += result.skipped;
      report.sessions++;
      report.bytes += session.bytes;
      report.byAgent[session.agent] = (report.byAgent[session.agent] ?? 0) + 1;
    } catch (error) {
      // One unreadable session (a damaged database, a file removed meanwhile) does not stop the rest.
      report.failed++;
      logError(`import ${session.agent} session ${session.sessionId}`, error, root);
    }
    options.onProgress?.(index + 1, sessions.length);
  });
  report.ms = performance.now() - started;
  return report;
}

/** The session a hook of `agent` is about, from its JSON on stdin; undefined when it names none we can read. */
export function hookSession(
  agent: HookAgent,
  root: string,
  input: Record<string, unknown>,
  where: AgentHome,
): FoundSession | undefined {
  const transcript =
    typeof input.transcript_path === "string" && input.transcript_path ? input.transcript_path : undefined;
  switch (agent) {
    case "codex": {
      const id = typeof input.session_id === "string" ? input.session_id : undefined;
      const path = transcript ?? (id ? findRollout(id, where) : undefined);
      return path ? codexSessionAt(path) : undefined;
    }
    case "cursor": {
      const id = typeof input.conversation_id === "string" ? input.conversation_id : undefined;
      if (!id) return undefined;
      const path = transcript ?? findCursorTranscript(root, id, where);
      return path ? cursorSessionAt(path, id) : undefined;
    }
    case "opencode": {
      const id = typeof input.session_id === "string" ? input.session_id : undefined;
      return id ? findOpencodeSession(root, id, where) : undefined;
    }
  }
}

export type HookAgent = Exclude<SourceAgent, "claude">;

/**
 * What a capture hook of Codex, Cursor or OpenCode does: the session its payload names, read from the
 * agent's storage, appended where chats.jsonl does not hold it yet. Throws when the payload names no
 * session that can be read (the hook logs it).
 */
export async function captureHook(
  agent: HookAgent,
  root: string,
  input: Record<string, unknown>,
  where: AgentHome,
): Promise<AppendResult> {
  const session = hookSession(agent, root, input, where);
  if (!session) throw new Error(`${agent} hook: the payload names no session triforge can read`);
  if ((await forgottenSessions(root)).has(session.sessionId)) return { appended: 0, skipped: 0 };
  return captureSessionTurns(root, agent, session.sessionId, (resume) =>
    agent === "codex"
      ? codexHookRead(session, input, resume)
      : agent === "cursor"
        ? cursorHookRead(session, resume)
        : opencodeHookRead(session, resume),
  );
}

/** How often the capture hooks of agents that never say a session ended start the indexer. */
export const INDEX_EVERY_MS = 10 * 60_000;

/**
 * Whether a capture that stored something should start the background indexer: at the end of a
 * session (Cursor's `sessionEnd`), else at most once every INDEX_EVERY_MS per project. Codex and
 * OpenCode report each reply, never the end of a session, and indexing after every reply would pay for
 * LLM extraction and summaries every time.
 */
export function indexDue(root: string, sessionEnded: boolean, now = Date.now()): boolean {
  const last = lastIndexStart(root);
  if (!sessionEnded && last !== undefined && now - last < INDEX_EVERY_MS) return false;
  markIndexStart(root, now);
  return true;
}

/**
 * Whether a new session (Codex's `SessionStart`) should start the indexer: when chats.jsonl changed
 * after the capture hooks last started it, so the previous session's last replies, held back by
 * indexDue, become searchable now.
 */
export function catchUpDue(root: string, now = Date.now()): boolean {
  const changed = statSync(chatLogPath(root), { throwIfNoEntry: false })?.mtimeMs;
  const last = lastIndexStart(root);
  if (changed === undefined || (last !== undefined && changed <= last)) return false;
  markIndexStart(root, now);
  return true;
}

function indexMarker(root: string): string {
  return join(agentCaptureStateDir(root), "indexed-at");
}

function lastIndexStart(root: string): number | undefined {
  return statSync(indexMarker(root), { throwIfNoEntry: false })?.mtimeMs;
}

function markIndexStart(root: string, now: number): void {
  mkdirSync(agentCaptureStateDir(root), { recursive: true });
  writeFileSync(indexMarker(root), `${new Date(now).toISOString()}\n`);
}
