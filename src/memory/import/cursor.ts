/**
 * Cursor's agent sessions: `~/.cursor/projects/<slug>/agent-transcripts/<id>/<id>.jsonl` (earlier
 * releases: `agent-transcripts/<id>.jsonl`), the slug being the workspace folder without its leading
 * `/`, every character outside [a-zA-Z0-9] turned into `-`. Subagents write under `<id>/subagents/`,
 * which is never read.
 *
 * Each line is `{role: "user"|"assistant", message: {content}}` (Anthropic's message shape) or a
 * lifecycle marker (`{type: "turn_ended", …}`). The person's words sit inside `<user_query>` in a user
 * message that may also carry attached files, rules and other context Cursor adds, and a
 * `<timestamp>` (the only time the format has: replies get the time of the message they answer, the
 * file's last change where there is none); a message Cursor writes itself to report a background task
 * opens with `<system_notification>`. Assistant text blocks end with `[REDACTED]` where Cursor left the
 * model's thinking out; a block that is only that marker says nothing.
 *
 * Each turn is keyed `cursor:<id>:<line number>` (the transcript only grows).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Role } from "../transcript.ts";
import {
  type AgentHome,
  type FileResume,
  type FoundSession,
  jsonObject,
  readNewLines,
  textBlocks,
} from "./sessions.ts";
import type { ResumePoint, SessionRead, SourceTurn } from "./turns.ts";

/** Cursor's folder name for a workspace. */
export function cursorSlug(path: string): string {
  return path.replace(/^[/\\]+/, "").replace(/[^a-zA-Z0-9]/g, "-");
}

/** `~/.cursor` (`$CURSOR_CONFIG_DIR` moves it for Cursor's CLI agent). */
export function cursorTranscriptsDir(root: string, { home, env }: AgentHome): string {
  return join(
    env.CURSOR_CONFIG_DIR || join(home, ".cursor"),
    "projects",
    cursorSlug(root),
    "agent-transcripts",
  );
}

function session(path: string, sessionId: string): FoundSession {
  const stat = statSync(path);
  return { agent: "cursor", sessionId, path, bytes: stat.size, modifiedMs: stat.mtimeMs };
}

export function findCursorSessions(root: string, where: AgentHome): FoundSession[] {
  const dir = cursorTranscriptsDir(root, where);
  if (!existsSync(dir)) return [];
  const found: FoundSession[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith(".jsonl")) {
      found.push(session(join(dir, entry.name), entry.name.slice(0, -".jsonl".length)));
    } else if (entry.isDirectory()) {
      const path = join(dir, entry.name, `${entry.name}.jsonl`);
      if (existsSync(path)) found.push(session(path, entry.name));
    }
  }
  return found;
}

/** The transcript of conversation `id` of a workspace, for a hook payload that names none. */
export function findCursorTranscript(root: string, id: string, where: AgentHome): string | undefined {
  const dir = cursorTranscriptsDir(root, where);
  for (const path of [join(dir, id, `${id}.jsonl`), join(dir, `${id}.jsonl`)])
    if (existsSync(path)) return path;
  return undefined;
}

/** Context Cursor wraps around the person's words in the same message. */
const CONTEXT_TAGS = [
  "attached_files",
  "additional_data",
  "user_info",
  "rules",
  "open_and_recently_viewed_files",
  "manually_added_selection",
  "terminal_selection",
  "git_status",
  "agent_skills",
];

function between(text: string, tag: string): string[] {
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  const found: string[] = [];
  let from = 0;
  for (;;) {
    const start = text.indexOf(open, from);
    if (start < 0) return found;
    const end = text.indexOf(close, start + open.length);
    if (end < 0) return found;
    found.push(text.slice(start + open.length, end));
    from = end + close.length;
  }
}

/** The person's own words in a user message, or "" when Cursor wrote it. */
export function cursorUserProse(raw: string): string {
  const text = raw.trim();
  if (text.startsWith("<system_notification>")) return "";
  const queries = between(text, "user_query");
  if (queries.length)
    return queries
      .map((q) => q.trim())
      .filter(Boolean)
      .join("\n\n");
  let rest = text;
  for (const tag of CONTEXT_TAGS)
    for (const inner of between(rest, tag)) rest = rest.replace(`<${tag}>${inner}</${tag}>`, "");
  return rest.trim();
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * The time in a user message's `<timestamp>` tag ("Tuesday, Jul 21, 2026, 1:11 PM (UTC+3)"), as ISO
 * 8601, or undefined. Cursor writes no other time: a reply gets the time of the message it answers.
 */
export function cursorTimestamp(raw: string): string | undefined {
  const tag = between(raw, "timestamp")[0];
  const match =
    tag &&
    /([A-Z][a-z]{2})[a-z]* (\d{1,2}), (\d{4}),? (\d{1,2}):(\d{2})(?::(\d{2}))? ?([AP]M)? ?\(UTC(?:([+-])(\d{1,2})(?::?(\d{2}))?)?\)/.exec(
      tag,
    );
  if (!match) return undefined;
  const [, month, day, year, hour, minute, second, half, sign, offsetHours, offsetMinutes] = match;
  const monthIndex = MONTHS.indexOf(month);
  if (monthIndex < 0) return undefined;
  let h = Number(hour) % (half ? 12 : 24);
  if (half === "PM") h += 12;
  const offset = (sign === "-" ? -1 : 1) * (Number(offsetHours ?? 0) * 60 + Number(offsetMinutes ?? 0));
  const ms = Date.UTC(Number(year), monthIndex, Number(day), h, Number(minute) - offset, Number(second ?? 0));
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** The marker Cursor ends an assistant text block with where it left out the model's thinking. */
const REDACTED_MARKER = "[REDACTED]";

function assistantProse(block: string): string {
  let text = block.trim();
  while (text.endsWith(REDACTED_MARKER)) text = text.slice(0, -REDACTED_MARKER.length).trimEnd();
  return text;
}

/**
 * The prose of transcript lines, in order, the first being line `firstLine`; `lastTs` is the time the
 * lines before them left (see cursorTimestamp), `fallbackTs` stands in before any. Pure; only complete
 * lines are read.
 */
export function parseCursorTranscript(
  text: string,
  sessionId: string,
  fallbackTs: string,
  firstLine = 0,
  lastTs?: string,
): { turns: SourceTurn[]; lastTs?: string } {
  const end = text.lastIndexOf("\n") + 1;
  const turns: SourceTurn[] = [];
  let said = lastTs;
  text
    .slice(0, end)
    .split("\n")
    .forEach((line, index) => {
      const record = jsonObject(line);
      const role = record?.role;
      if (role !== "user" && role !== "assistant") return;
      const message = record?.message as { content?: unknown } | undefined;
      const blocks = textBlocks(message?.content);
      if (role === "user") said = blocks.map(cursorTimestamp).find(Boolean) ?? said;
      const pieces = role === "user" ? blocks.map(cursorUserProse) : blocks.map(assistantProse);
      const prose = pieces.filter(Boolean).join("\n\n");
      if (prose)
        turns.push({
          key: `cursor:${sessionId}:${firstLine + index}`,
          role: role as Role,
          text: prose,
          ts: said ?? fallbackTs,
        });
    });
  return { turns, lastTs: said };
}

export function readCursorSession(session: FoundSession): SourceTurn[] {
  const text = readFileSync(session.path, "utf8");
  return parseCursorTranscript(text, session.sessionId, new Date(session.modifiedMs).toISOString()).turns;
}

/** What the stop and sessionEnd hooks read: the transcript's lines past `resume`. */
export function cursorHookRead(session: FoundSession, resume: ResumePoint | undefined): SessionRead {
  const previous = resume as (FileResume & { lastTs?: string }) | undefined;
  const part = readNewLines(session.path, previous);
  const carried = part.firstLine > 0 ? previous?.lastTs : undefined;
  const { turns, lastTs } = parseCursorTranscript(
    part.text,
    session.sessionId,
    new Date().toISOString(),
    part.firstLine,
    carried,
  );
  return { turns, resume: { ...part.resume, lastTs }, whole: part.firstLine === 0 };
}

/** A transcript named by a hook: conversation id from its file name. */
export function cursorSessionAt(path: string, id: string): FoundSession {
  return session(path, id);
}
