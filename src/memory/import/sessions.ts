/**
 * What every source of past sessions shares: which agents there are, what a found session is, and
 * which sessions belong to a project.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { homedir } from "node:os";
import { readAt } from "../../home/file-io.ts";
import { normalizeProjectPath } from "../../home/paths.ts";
import { findProjectRoot } from "../../project/config.ts";

export const SOURCE_AGENTS = ["claude", "codex", "cursor", "opencode"] as const;
export type SourceAgent = (typeof SOURCE_AGENTS)[number];

export const AGENT_LABELS: Record<SourceAgent, string> = {
  claude: "Claude Code",
  codex: "Codex",
  cursor: "Cursor",
  opencode: "OpenCode",
};

/** Where the agents keep their data: the user's home and the environment that moves it. */
export interface AgentHome {
  home: string;
  env: Record<string, string | undefined>;
}

/** This user's: HOME (USERPROFILE on Windows) first, as every agent resolves its own folder. */
export function agentHome(env: Record<string, string | undefined> = process.env): AgentHome {
  const home = (process.platform === "win32" ? env.USERPROFILE : env.HOME) || homedir();
  return { home, env };
}

/** One past session of one agent, found on disk. */
export interface FoundSession {
  agent: SourceAgent;
  sessionId: string;
  /** The transcript file, or the database that holds the session. */
  path: string;
  /** Size of the session's stored text, for the "how much was found" line and MB/s. */
  bytes: number;
  /** Last change, ms since the epoch (`--since` compares with it). */
  modifiedMs: number;
}

/**
 * A session whose working folder is `cwd` belongs to `root` when the folder is the root or inside it,
 * and no other active project nearer to it claims it (the same rule capture's `cwd` fallback follows).
 */
export function belongsTo(cwd: string, root: string): boolean {
  const folder = normalizeProjectPath(cwd);
  const project = normalizeProjectPath(root);
  if (folder !== project && !folder.startsWith(project === "/" ? "/" : `${project}/`)) return false;
  const nearest = findProjectRoot(cwd);
  return nearest === undefined || normalizeProjectPath(nearest) === project;
}

/** The first line of a file, read in bounded steps (a session's first record may be tens of KB). */
export function firstLine(path: string, limit = 4 << 20): string | undefined {
  const fd = openSync(path, "r");
  try {
    const chunks: Buffer[] = [];
    let length = 0;
    while (length < limit) {
      const buffer = Buffer.allocUnsafe(64 << 10);
      const n = readSync(fd, buffer, 0, buffer.length, length);
      if (n === 0) break;
      const newline = buffer.subarray(0, n).indexOf(10);
      if (newline >= 0) {
        chunks.push(buffer.subarray(0, newline));
        return Buffer.concat(chunks).toString("utf8");
      }
      chunks.push(buffer.subarray(0, n));
      length += n;
    }
    return chunks.length ? Buffer.concat(chunks).toString("utf8") : undefined;
  } finally {
    closeSync(fd);
  }
}

/** The complete lines among the first `bytes` of a file (all of them when the file is shorter). */
export function headLines(path: string, bytes: number): string[] {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(bytes);
    const n = readSync(fd, buffer, 0, bytes, 0);
    const end = n < bytes ? n : buffer.subarray(0, n).lastIndexOf(10) + 1;
    return buffer.toString("utf8", 0, end).split("\n");
  } finally {
    closeSync(fd);
  }
}

/** Where a hook stopped reading a JSONL session file, so the next one reads only what was added. */
export interface FileResume {
  path: string;
  /** Bytes read: always the end of a complete line. */
  offset: number;
  /** Lines before `offset`: the number the next line has. */
  lines: number;
  /** Hash of the bytes just before `offset`: tells a longer file from a replaced one. */
  fingerprint: string;
}

/** Bytes before a resume offset that must be unchanged for the file to count as the same file, grown. */
const FINGERPRINT_BYTES = 4096;

function fingerprint(fd: number, end: number): string {
  const start = Math.max(0, end - FINGERPRINT_BYTES);
  return Bun.hash(readAt(fd, start, end - start)).toString(36);
}

/**
 * The complete lines a JSONL session file holds past `resume` (all of them when there is none, or the
 * file was replaced or shrank), the number of the first, and where the next read starts. A line still
 * being written is left for that next read.
 */
export function readNewLines(
  path: string,
  resume: FileResume | undefined,
): { text: string; firstLine: number; resume: FileResume } {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const same =
      resume !== undefined &&
      resume.path === path &&
      resume.offset <= size &&
      fingerprint(fd, resume.offset) === resume.fingerprint;
    const start = same ? resume.offset : 0;
    const firstLine = same ? resume.lines : 0;
    const added = readAt(fd, start, size - start);
    const end = added.lastIndexOf(10) + 1;
    const text = added.toString("utf8", 0, end);
    let lines = 0;
    for (let i = added.indexOf(10); i >= 0 && i < end; i = added.indexOf(10, i + 1)) lines++;
    const offset = start + end;
    return {
      text,
      firstLine,
      resume: { path, offset, lines: firstLine + lines, fingerprint: fingerprint(fd, offset) },
    };
  } finally {
    closeSync(fd);
  }
}

/** A record's text blocks (`{type:"text", text}` and the Responses API's input/output text). */
export function textBlocks(content: unknown, types: readonly string[] = ["text"]): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const block of content as unknown[]) {
    if (!block || typeof block !== "object") continue;
    const { type, text } = block as { type?: unknown; text?: unknown };
    if (typeof type === "string" && types.includes(type) && typeof text === "string") texts.push(text);
  }
  return texts;
}

/** Parses one JSONL line into an object, or undefined (blank, cut by a crash, not an object). */
export function jsonObject(line: string): Record<string, unknown> | undefined {
  if (!line.trim()) return undefined;
  try {
    const value = JSON.parse(line);
    return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
