/**
 * Cursor's agent sessions: `~/.cursor/projects/<slug>/agent-transcripts/<id>/<id>.jsonl` (earlier
 * releases: `agent-transcripts/<id>.jsonl`), the slug being the workspace folder without its leading
 * `/`, every character outside [a-zA-Z0-9] turned into `-`. Subagents write under `<id>/subagents/`,
 * which is never read.
 *
 * Each line is `{role: "user"|"assistant", message: {content}}` (Anthropic's message shape) or a
 * lifecycle marker (`{type: "turn_ended", …}`). The person's words sit inside `<user_query>` in a user
 * message that may also carry attached files, rules and other context Cursor adds; a message Cursor
 * writes itself to report a background task opens with `<system_notification>`. The lines carry no
 * time, so every turn gets the file's last change.
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

export function cursorTranscriptsDir(root: string, { home }: AgentHome): string {
  return join(home, ".cursor", "projects", cursorSlug(root), "agent-transcripts");
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

/**
 * The prose of transcript lines, in order, the first being line `firstLine`. Pure; only complete lines
 * are read.
 */
export function parseCursorTranscript(
  text: string,
  sessionId: string,
  ts: string,
  firstLine = 0,
): SourceTurn[] {
  const end = text.lastIndexOf("\n") + 1;
  const turns: SourceTurn[] = [];
  text
    .slice(0, end)
    .split("\n")
    .forEach((line, index) => {
      const record = jsonObject(line);
      const role = record?.role;
      if (role !== "user" && role !== "assistant") return;
      const message = record?.message as { content?: unknown } | undefined;
      const blocks = textBlocks(message?.content);
      const pieces = role === "user" ? blocks.map(cursorUserProse) : blocks.map((b) => b.trim());
      const prose = pieces.filter(Boolean).join("\n\n");
      if (prose)
        turns.push({ key: `cursor:${sessionId}:${firstLine + index}`, role: role as Role, text: prose, ts });
    });
  return turns;
}

export function readCursorSession(session: FoundSession): SourceTurn[] {
  const text = readFileSync(session.path, "utf8");
  return parseCursorTranscript(text, session.sessionId, new Date(session.modifiedMs).toISOString());
}

/** What the stop and sessionEnd hooks read: the transcript's lines past `resume`. */
export function cursorHookRead(session: FoundSession, resume: ResumePoint | undefined): SessionRead {
  const part = readNewLines(session.path, resume as FileResume | undefined);
  const turns = parseCursorTranscript(part.text, session.sessionId, new Date().toISOString(), part.firstLine);
  return { turns, resume: { ...part.resume }, whole: part.firstLine === 0 };
}

/** A transcript named by a hook: conversation id from its file name. */
export function cursorSessionAt(path: string, id: string): FoundSession {
  return session(path, id);
}
