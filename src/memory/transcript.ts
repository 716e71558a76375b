/**
 * Claude Code transcript JSONL → the human and assistant prose of a conversation.
 *
 * Pure: no I/O. Understands every transcript format from CLI 1.0.98 to 2.1.332. A transcript line is
 * one JSON record; only `user` and `assistant` records of the main thread can carry prose, and many of
 * those carry plumbing instead (tool calls and results, thinking, hook feedback, slash-command
 * expansions, compaction summaries). Everything that is not something a person or the model *said*
 * is dropped, so that memory recalls the conversation and not its machinery.
 */

export type Role = "user" | "assistant";

export interface TranscriptTurn {
  /**
   * The transcript `uuid` of the first record that contributed text: the turn's stable key. An
   * assistant reply streamed over several records of one `message.id` is one turn under this key.
   */
  uuid: string;
  role: Role;
  text: string;
  /** The record's ISO timestamp, when it has one. */
  timestamp?: string;
  sessionId?: string;
}

export interface ParsedTranscript {
  turns: TranscriptTurn[];
  /** Lines that were not a JSON object: skipped and counted, never fatal (a crash can cut a line). */
  malformed: number;
}

/**
 * Wrappers Claude Code puts around text it injects into user records: command output, caveats,
 * background-task notices, reminders, IDE context, `!` bash mode. Whatever sits inside them is not
 * something the person wrote.
 */
const INJECTED_TAGS = [
  "system-reminder",
  "local-command-stdout",
  "local-command-stderr",
  "local-command-caveat",
  "task-notification",
  "bash-input",
  "bash-stdout",
  "bash-stderr",
  "user-prompt-submit-hook",
  "ide_opened_file",
  "ide_selection",
  "ide_diagnostics",
];

const TASK_NOTIFICATION = "<task-notification>";

/** Written by the CLI when the person presses Esc; not something they said. */
const INTERRUPTED_MARKER = "[Request interrupted by user";

/** Feedback a hook fed back to the model ("Stop hook feedback:", "PreToolUse:Bash hook error: …"). */
const HOOK_FEEDBACK = /^[\w:*|.-]+ hook (?:feedback|error|blocking error)\b/i;

/**
 * How a compaction summary starts. Newer CLIs also flag the record `isCompactSummary`; this catches
 * the CLIs that did not.
 */
const COMPACT_SUMMARY_PREFIX = "This session is being continued from a previous conversation";

/** Text between `<tag>` and `</tag>`, or undefined. */
function tagContent(text: string, tag: string): string | undefined {
  const open = text.indexOf(`<${tag}>`);
  if (open < 0) return undefined;
  const start = open + tag.length + 2;
  const close = text.indexOf(`</${tag}>`, start);
  return close < 0 ? undefined : text.slice(start, close);
}

/**
 * Removes every `<tag>…</tag>` span of the injected tags. Linear: one left-to-right scan per tag, each
 * search starting where the previous one ended; an unclosed tag is left as it is.
 */
function stripInjected(text: string): string {
  let result = text;
  for (const tag of INJECTED_TAGS) {
    const open = `<${tag}>`;
    if (!result.includes(open)) continue;
    const close = `</${tag}>`;
    let out = "";
    let from = 0;
    for (;;) {
      const start = result.indexOf(open, from);
      if (start < 0) break;
      const end = result.indexOf(close, start + open.length);
      if (end < 0) break;
      out += result.slice(from, start);
      from = end + close.length;
    }
    result = out + result.slice(from);
  }
  return result;
}

/**
 * The prose in one piece of user text, or "" when it holds none.
 *
 * A typed slash command keeps what the person typed after it (`/orchestrator create a TODO app` is
 * the task they asked for); its expansion arrives in a separate `isMeta` record that is dropped, and
 * a command without arguments (`/model`, `/clear`) says nothing worth remembering.
 */
export function userProse(raw: string): string {
  const start = raw.trimStart();
  if (start.startsWith("<command-")) {
    const name = tagContent(raw, "command-name")?.trim() ?? "";
    const args = tagContent(raw, "command-args")?.trim() ?? "";
    if (!args) return "";
    if (!name) return args;
    return `${name.startsWith("/") ? name : `/${name}`} ${args}`;
  }
  // A background-task notice arrives as a whole user record, tags plus an instruction to the model.
  if (start.startsWith(TASK_NOTIFICATION)) return "";
  const text = stripInjected(raw).trim();
  if (!text) return "";
  if (text.startsWith(INTERRUPTED_MARKER)) return "";
  if (text.startsWith(COMPACT_SUMMARY_PREFIX)) return "";
  if (HOOK_FEEDBACK.test(text)) return "";
  return text;
}

interface RecordShape {
  type?: unknown;
  uuid?: unknown;
  timestamp?: unknown;
  sessionId?: unknown;
  isMeta?: unknown;
  isSidechain?: unknown;
  isCompactSummary?: unknown;
  isApiErrorMessage?: unknown;
  message?: { id?: unknown; model?: unknown; content?: unknown };
}

interface TextBlock {
  type: "text";
  text: string;
}

function textBlocks(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const block of content as unknown[]) {
    if (block && typeof block === "object" && (block as TextBlock).type === "text") {
      const text = (block as TextBlock).text;
      if (typeof text === "string") texts.push(text);
    }
  }
  return texts;
}

function userText(record: RecordShape): string {
  const content = record.message?.content;
  const pieces = typeof content === "string" ? [content] : textBlocks(content);
  return pieces
    .map(userProse)
    .filter((p) => p)
    .join("\n\n");
}

function assistantText(record: RecordShape): string {
  // `<synthetic>` replies are written by the CLI itself ("No response requested.", API errors).
  if (record.isApiErrorMessage || record.message?.model === "<synthetic>") return "";
  return textBlocks(record.message?.content)
    .map((t) => t.trim())
    .filter((t) => t)
    .join("\n\n");
}

/**
 * Parses transcript lines into turns, in the order they were said. Assistant text split over several
 * records of one `message.id` (one record per content block, often interleaved with tool calls) is
 * joined into the turn that the first of them started.
 */
export function parseTranscriptLines(lines: Iterable<string>): ParsedTranscript {
  const turns: TranscriptTurn[] = [];
  const assistantTurnByMessage = new Map<string, TranscriptTurn>();
  let malformed = 0;
  for (const line of lines) {
    if (!line.trim()) continue;
    let record: RecordShape;
    try {
      record = JSON.parse(line);
    } catch {
      malformed++;
      continue;
    }
    if (!record || typeof record !== "object" || Array.isArray(record)) {
      malformed++;
      continue;
    }
    const role = record.type;
    if (role !== "user" && role !== "assistant") continue;
    // Subagent threads (inline in 1.0.x, in `subagents/` files later) are the model talking to itself.
    if (record.isSidechain === true) continue;
    // Meta records are injected by the CLI: slash-command expansions, hook feedback, caveats.
    if (record.isMeta === true || record.isCompactSummary === true) continue;
    if (typeof record.uuid !== "string") continue;

    const text = role === "user" ? userText(record) : assistantText(record);
    if (!text) continue;
    const messageId = role === "assistant" ? record.message?.id : undefined;
    if (typeof messageId === "string") {
      const started = assistantTurnByMessage.get(messageId);
      if (started) {
        started.text += `\n\n${text}`;
        continue;
      }
    }
    const turn: TranscriptTurn = { uuid: record.uuid, role, text };
    if (typeof record.timestamp === "string") turn.timestamp = record.timestamp;
    if (typeof record.sessionId === "string") turn.sessionId = record.sessionId;
    turns.push(turn);
    if (typeof messageId === "string") assistantTurnByMessage.set(messageId, turn);
  }
  return { turns, malformed };
}

/** Parses a whole transcript (or a run of complete lines of one). */
export function parseTranscript(text: string): ParsedTranscript {
  return parseTranscriptLines(text.split("\n"));
}
