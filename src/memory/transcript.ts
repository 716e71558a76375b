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
  /**
   * The `promptId` of the person's prompt this turn belongs to (CLI 2.1.1xx on; the user records
   * carry it, the assistant records after them inherit it). The Stop hook's `prompt_id` names it too.
   */
  promptId?: string;
  /**
   * The text each contributing record added, in order: one part for a user turn, one per record of an
   * assistant reply. The Stop hook's `last_assistant_message` is the last part of the last reply, so
   * capture can tell which part of a reply it already stored from the hook's payload.
   */
  parts: string[];
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

/**
 * Written by the CLI when the person presses Esc: the whole text is one bracketed line,
 * "[Request interrupted by user]" or "[Request interrupted by user for tool use]".
 */
const INTERRUPTED_MARKER = "[Request interrupted by user";

/**
 * How the CLI writes a Stop hook's feedback to the model: its own header line, then the hook's command
 * in brackets ("Stop hook feedback:\n- [cmd]: …" in 1.0.x, "…\n[cmd]: …" later). From 2.1 the record is
 * also `isMeta`; 1.0.x wrote it as a plain user record, so only this exact header and bracket tell it
 * from a person writing about hooks ("pre-commit hook error again: black fails" is a real turn).
 */
const HOOK_FEEDBACK_HEADERS = ["Stop hook feedback:\n", "SubagentStop hook feedback:\n"];

function isHookFeedback(text: string): boolean {
  const header = HOOK_FEEDBACK_HEADERS.find((h) => text.startsWith(h));
  if (!header) return false;
  const next = text.slice(header.length);
  return next.startsWith("[") || next.startsWith("- [");
}

function isInterruptionMarker(text: string): boolean {
  return text.startsWith(INTERRUPTED_MARKER) && text.endsWith("]") && !text.includes("\n");
}

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
  if (isInterruptionMarker(text)) return "";
  if (text.startsWith(COMPACT_SUMMARY_PREFIX)) return "";
  if (isHookFeedback(text)) return "";
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
  isVisibleInTranscriptOnly?: unknown;
  promptId?: unknown;
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
 * Turns transcript lines into turns, in the order they were said, a batch of lines at a time (capture
 * reads a long transcript in bounded chunks and feeds each one here). Assistant text split over several
 * records of one `message.id` (one record per content block, often interleaved with tool calls) is
 * joined into the turn that the first of them started.
 */
export class TranscriptParser {
  readonly turns: TranscriptTurn[] = [];
  /** Lines that were not a JSON object. */
  malformed = 0;
  /** The prompt the next records belong to: the last `promptId` a user record carried. */
  promptId: string | undefined;
  private readonly assistantTurnByMessage = new Map<string, TranscriptTurn>();

  /** `promptId`: the prompt in progress where these lines start (capture resuming mid-transcript). */
  constructor(promptId?: string) {
    this.promptId = promptId;
  }

  add(lines: Iterable<string>): void {
    for (const line of lines) this.addLine(line);
  }

  private addLine(line: string): void {
    if (!line.trim()) return;
    let record: RecordShape;
    try {
      record = JSON.parse(line);
    } catch {
      this.malformed++;
      return;
    }
    if (!record || typeof record !== "object" || Array.isArray(record)) {
      this.malformed++;
      return;
    }
    const role = record.type;
    if (role !== "user" && role !== "assistant") return;
    // Subagent threads (inline in 1.0.x, in `subagents/` files later) are the model talking to itself.
    if (record.isSidechain === true) return;
    if (role === "user" && typeof record.promptId === "string") this.promptId = record.promptId;
    // Meta records are injected by the CLI: slash-command expansions, hook feedback, caveats; 1.0.x
    // flagged a UserPromptSubmit hook's output `isVisibleInTranscriptOnly` instead.
    if (
      record.isMeta === true ||
      record.isCompactSummary === true ||
      record.isVisibleInTranscriptOnly === true
    )
      return;
    if (typeof record.uuid !== "string") return;

    const text = role === "user" ? userText(record) : assistantText(record);
    if (!text) return;
    const messageId = role === "assistant" ? record.message?.id : undefined;
    if (typeof messageId === "string") {
      const started = this.assistantTurnByMessage.get(messageId);
      if (started) {
        started.text += `\n\n${text}`;
        started.parts.push(text);
        return;
      }
    }
    const turn: TranscriptTurn = { uuid: record.uuid, role, text, parts: [text] };
    if (typeof record.timestamp === "string") turn.timestamp = record.timestamp;
    if (typeof record.sessionId === "string") turn.sessionId = record.sessionId;
    if (this.promptId !== undefined) turn.promptId = this.promptId;
    this.turns.push(turn);
    if (typeof messageId === "string") this.assistantTurnByMessage.set(messageId, turn);
  }
}

/** Parses transcript lines into turns (see TranscriptParser). */
export function parseTranscriptLines(lines: Iterable<string>): ParsedTranscript {
  const parser = new TranscriptParser();
  parser.add(lines);
  return { turns: parser.turns, malformed: parser.malformed };
}

/** Parses a whole transcript (or a run of complete lines of one). */
export function parseTranscript(text: string): ParsedTranscript {
  return parseTranscriptLines(text.split("\n"));
}
