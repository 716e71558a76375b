/**
 * Codex's sessions: one "rollout" JSONL file each, `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`
 * (`$CODEX_HOME` defaults to `~/.codex`; archived sessions move to `archived_sessions/`).
 *
 * Every line is `{timestamp, type, payload}`. The first is `session_meta` (`payload.id`, `payload.cwd`;
 * `payload.source` is `{subagent: …}` for a subagent's own thread, which stays out like Claude Code's
 * sidechains). What was said is recorded twice: as `event_msg` lines (`user_message` is exactly what
 * the person typed, `agent_message` what the model showed; since 0.16x `item_completed` events with a
 * `UserMessage` or `AgentMessage` item instead) and as `response_item` messages, whose user side also
 * carries the instructions and environment Codex injects. The events are read; a rollout
 * written before Codex recorded them falls back to the messages, minus the injected ones. Tool calls,
 * reasoning, token counts and turn contexts are never read.
 *
 * A turn is keyed `codex:<session id>:<line number>` (a rollout only grows, so a line keeps its number
 * however often the file is read; the Stop hook reads it after every turn), and a reply within a turn
 * Codex names (`task_started.turn_id`) `codex:<session id>:<turn id>:<hash of the text>`, the key the
 * Stop hook's `last_assistant_message` gets when the rollout does not hold the reply yet.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Role } from "../transcript.ts";
import {
  type AgentHome,
  belongsTo,
  type FileResume,
  type FoundSession,
  firstLine,
  jsonObject,
  readNewLines,
  textBlocks,
} from "./sessions.ts";
import type { ResumePoint, SessionRead, SourceTurn } from "./turns.ts";

export function codexHome({ home, env }: AgentHome): string {
  return env.CODEX_HOME || join(home, ".codex");
}

/** What Codex puts into user messages on its own: instructions, environment, AGENTS.md, shell output. */
const INJECTED_USER_PREFIXES = [
  "<environment_context>",
  "<user_instructions>",
  "<INSTRUCTIONS>",
  "# AGENTS.md instructions",
  "<user_shell_command>",
  "<turn_aborted>",
];

function injected(text: string): boolean {
  const start = text.trimStart();
  return INJECTED_USER_PREFIXES.some((prefix) => start.startsWith(prefix));
}

export interface RolloutMeta {
  id: string;
  cwd?: string;
  /** A subagent's thread (`source: {subagent: …}`). */
  subagent: boolean;
}

/** The session_meta of a rollout's first line (also the bare first line of 2025's early format). */
export function rolloutMeta(line: string | undefined): RolloutMeta | undefined {
  const record = line === undefined ? undefined : jsonObject(line);
  if (!record) return undefined;
  const payload = (record.type === "session_meta" ? record.payload : record) as Record<string, unknown>;
  if (!payload) return undefined;
  // `id` names the thread this file records; since May 2026 `session_id` names the session beside it.
  const id = typeof payload.id === "string" ? payload.id : payload.session_id;
  if (typeof id !== "string" || !id) return undefined;
  const source = payload.source;
  return {
    id,
    cwd: typeof payload.cwd === "string" ? payload.cwd : undefined,
    subagent: typeof source === "object" && source !== null && "subagent" in source,
  };
}

function* rolloutFiles(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* rolloutFiles(path);
    else if (entry.isFile() && entry.name.startsWith("rollout-") && entry.name.endsWith(".jsonl")) yield path;
  }
}

export function findCodexSessions(root: string, where: AgentHome): FoundSession[] {
  const base = codexHome(where);
  const found: FoundSession[] = [];
  for (const folder of ["sessions", "archived_sessions"]) {
    for (const path of rolloutFiles(join(base, folder))) {
      const meta = rolloutMeta(firstLine(path));
      // Rollouts of early 2025 have no working folder: nothing says which project they were about.
      if (!meta?.cwd || meta.subagent || !belongsTo(meta.cwd, root)) continue;
      const stat = statSync(path);
      found.push({ agent: "codex", sessionId: meta.id, path, bytes: stat.size, modifiedMs: stat.mtimeMs });
    }
  }
  return found;
}

/** The rollout of session `id` under `$CODEX_HOME`, for a hook payload that names no transcript. */
export function findRollout(id: string, where: AgentHome): string | undefined {
  const base = codexHome(where);
  for (const folder of ["sessions", "archived_sessions"])
    for (const path of rolloutFiles(join(base, folder))) if (path.endsWith(`-${id}.jsonl`)) return path;
  return undefined;
}

interface Said {
  key: string;
  role: Role;
  text: string;
  ts?: string;
}

/**
 * The key of a reply the model gave in turn `turnId`. The Stop hook's `last_assistant_message` may
 * arrive before Codex has written that reply to the rollout: stored under this key, it is the same
 * record the rollout's line becomes once written, so it is kept once.
 */
export function codexReplyKey(sessionId: string, turnId: string, text: string): string {
  return `codex:${sessionId}:${turnId}:${Bun.hash(text.trim()).toString(36)}`;
}

/** What reading a rollout carries from one part to the next besides the file position. */
export interface RolloutContext {
  /** The turn being recorded (`task_started` and `turn_context` name it); its replies are keyed by it. */
  turnId?: string;
  /**
   * Which records hold the prose, decided by the first part that has any: `event_msg` lines, or, in
   * rollouts written before Codex recorded events, `response_item` messages. Kept for the file, so a part
   * whose event lines are not written yet never falls back to the messages and stores a reply twice.
   */
  format?: "events" | "messages";
  /** The keys of the replies read so far in that turn: a later Stop of the same turn may repeat one. */
  replies?: string[];
}

/**
 * The prose of rollout lines, in order. Pure. `firstLine` is the number of the first line of `text`
 * and `context` what the lines before it left; `fallbackTs` stands in for lines without a timestamp.
 * Only complete lines are read: a line Codex is still writing waits for the next read.
 */
export function parseRollout(
  text: string,
  sessionId: string,
  fallbackTs: string,
  firstLine = 0,
  context: RolloutContext = {},
): { turns: SourceTurn[]; context: RolloutContext } {
  const end = text.lastIndexOf("\n") + 1;
  const lines = text.slice(0, end).split("\n");
  const events: Said[] = [];
  const messages: Said[] = [];
  const lineKey = (index: number) => `codex:${sessionId}:${firstLine + index}`;
  let { turnId } = context;
  let replies = context.replies ?? [];
  let sawEvents = false;
  lines.forEach((line, index) => {
    const record = jsonObject(line);
    if (!record) return;
    const ts = typeof record.timestamp === "string" ? record.timestamp : undefined;
    if (record.type === "turn_context") {
      const turn = record.payload as { turn_id?: unknown } | undefined;
      if (typeof turn?.turn_id === "string") turnId = turn.turn_id;
      return;
    }
    // 2025's early rollouts wrote response items bare, without the {type, payload} envelope.
    const payload = (
      record.type === "event_msg" || record.type === "response_item" ? record.payload : record
    ) as Record<string, unknown> | undefined;
    if (!payload) return;
    if (record.type === "event_msg") {
      sawEvents = true;
      if (payload.type === "task_started" || payload.type === "turn_started") {
        turnId = typeof payload.turn_id === "string" ? payload.turn_id : undefined;
        replies = [];
      }
      // Since 0.16x what was said is an `item_completed` event: a UserMessage or an AgentMessage item.
      if (payload.type === "item_completed") {
        const item = payload.item as { type?: unknown; content?: unknown } | undefined;
        const said = textBlocks(item?.content, ["text", "Text"])
          .map((t) => t.trim())
          .filter(Boolean)
          .join("\n\n");
        if (!said) return;
        if (typeof payload.turn_id === "string") turnId = payload.turn_id;
        if (item?.type === "UserMessage") events.push({ key: lineKey(index), role: "user", text: said, ts });
        else if (item?.type === "AgentMessage") {
          const key = turnId ? codexReplyKey(sessionId, turnId, said) : lineKey(index);
          events.push({ key, role: "assistant", text: said, ts });
          if (turnId) replies.push(key);
        }
        return;
      }
      const message = typeof payload.message === "string" ? payload.message.trim() : "";
      if (!message) return;
      // `kind` (0.4x) marks the instructions and environment Codex sends as user messages itself.
      if (payload.type === "user_message" && (payload.kind === undefined || payload.kind === "plain"))
        events.push({ key: lineKey(index), role: "user", text: message, ts });
      else if (payload.type === "agent_message") {
        const key = turnId ? codexReplyKey(sessionId, turnId, message) : lineKey(index);
        events.push({ key, role: "assistant", text: message, ts });
        if (turnId) replies.push(key);
      }
      return;
    }
    if (payload.type !== "message" || (payload.role !== "user" && payload.role !== "assistant")) return;
    const role = payload.role as Role;
    const texts = textBlocks(payload.content, role === "user" ? ["input_text"] : ["output_text"])
      .map((t) => t.trim())
      .filter((t) => t && !(role === "user" && injected(t)));
    if (texts.length) messages.push({ key: lineKey(index), role, text: texts.join("\n\n"), ts });
  });
  const format = context.format ?? (sawEvents ? "events" : messages.length ? "messages" : undefined);
  const said = format === "events" ? events : format === "messages" ? messages : [];
  const turns = said
    .filter((s) => s.role === "assistant" || !injected(s.text))
    .map((s) => ({ key: s.key, role: s.role, text: s.text, ts: s.ts ?? fallbackTs }));
  return { turns, context: { turnId, format, replies } };
}

export function readCodexSession(session: FoundSession): SourceTurn[] {
  const text = readFileSync(session.path, "utf8");
  return parseRollout(text, session.sessionId, new Date(session.modifiedMs).toISOString()).turns;
}

type RolloutResume = FileResume & RolloutContext;

/**
 * What the Stop hook reads: the rollout's lines past `resume`, plus the payload's
 * `last_assistant_message` when Codex has not written that reply to the rollout yet.
 */
export function codexHookRead(
  session: FoundSession,
  input: Record<string, unknown>,
  resume: ResumePoint | undefined,
): SessionRead {
  const previous = resume as RolloutResume | undefined;
  const part = readNewLines(session.path, previous);
  // Read from the start (a first capture, a replaced file): nothing carries over.
  const carried = part.firstLine > 0 ? previous : undefined;
  const now = new Date().toISOString();
  const { turns, context } = parseRollout(part.text, session.sessionId, now, part.firstLine, {
    turnId: carried?.turnId,
    format: carried?.format,
    replies: carried?.replies,
  });
  const { turn_id: turnId, last_assistant_message: last } = input;
  if (typeof turnId === "string" && typeof last === "string" && last.trim()) {
    const key = codexReplyKey(session.sessionId, turnId, last);
    // Not when the rollout holds it: read now, or earlier in the same turn.
    if (!turns.some((t) => t.key === key) && !context.replies?.includes(key))
      turns.push({ key, role: "assistant", text: last.trim(), ts: now, ahead: true });
  }
  return { turns, resume: { ...part.resume, ...context }, whole: part.firstLine === 0 };
}

/** A rollout named by a hook (`transcript_path`): its session, found from its first line. */
export function codexSessionAt(path: string): FoundSession | undefined {
  const meta = rolloutMeta(firstLine(path));
  if (!meta || meta.subagent) return undefined;
  const stat = statSync(path);
  return { agent: "codex", sessionId: meta.id, path, bytes: stat.size, modifiedMs: stat.mtimeMs };
}
