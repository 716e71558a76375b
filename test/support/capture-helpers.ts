/**
 * What the capture tests share: an isolated HOME with an active project, the project's chat log and
 * errors.log as the binary left them, and transcript lines shaped like the CLI writes them.
 */
import { expect } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectKey } from "../../src/home/paths.ts";
import { runBinary, SHARED, tempDir } from "./helpers.ts";

export const FIXTURES = join(SHARED, "fixtures/transcripts");

export interface ChatLine {
  ts: string;
  session_id: string;
  role: string;
  text: string;
  uuid: string;
  review?: boolean;
}

/** A fresh HOME, an active project in it and a folder for transcripts. */
export function setup(options: { active?: boolean } = {}) {
  const home = tempDir();
  const project = join(home, "work", "app");
  mkdirSync(join(project, "src"), { recursive: true });
  if (options.active !== false) {
    mkdirSync(join(project, ".triforge"));
    writeFileSync(join(project, ".triforge", "config.json"), "{}\n");
  }
  const transcripts = join(home, ".claude", "projects", "-work-app");
  mkdirSync(transcripts, { recursive: true });
  const dataDir = join(home, ".claude", "triforge", projectKey(project));
  const chats = () => {
    const file = join(dataDir, "chats.jsonl");
    if (!existsSync(file)) return [] as ChatLine[];
    const text = readFileSync(file, "utf8");
    expect(text === "" || text.endsWith("\n")).toBe(true);
    return text
      .split("\n")
      .filter((l) => l)
      .map((l) => JSON.parse(l) as ChatLine);
  };
  const errors = () =>
    existsSync(join(dataDir, "errors.log")) ? readFileSync(join(dataDir, "errors.log"), "utf8") : "";
  const capture = (input: unknown, args: string[] = [`--project=${project}`]) =>
    runBinary(["capture", ...args], {
      home,
      stdin: typeof input === "string" ? input : JSON.stringify(input),
    });
  return { home, project, transcripts, dataDir, chats, errors, capture };
}

export function hookInput(sessionId: string, transcriptPath: string, cwd: string) {
  return {
    session_id: sessionId,
    transcript_path: transcriptPath,
    cwd,
    hook_event_name: "Stop",
    stop_hook_active: false,
  };
}

/** Transcript lines shaped like the CLI writes them. */
export function userLine(uuid: string, text: string, sessionId = "s1"): string {
  return `${JSON.stringify({ type: "user", uuid, isSidechain: false, sessionId, timestamp: "2026-02-01T10:00:00.000Z", message: { role: "user", content: text } })}\n`;
}
export function assistantLine(uuid: string, messageId: string, text: string, sessionId = "s1"): string {
  return `${JSON.stringify({
    type: "assistant",
    uuid,
    isSidechain: false,
    sessionId,
    timestamp: "2026-02-01T10:00:01.000Z",
    message: {
      id: messageId,
      role: "assistant",
      model: "claude-opus-4-6",
      content: [{ type: "text", text }],
    },
  })}\n`;
}
export function toolLine(uuid: string, messageId: string): string {
  return `${JSON.stringify({
    type: "assistant",
    uuid,
    isSidechain: false,
    message: {
      id: messageId,
      role: "assistant",
      content: [{ type: "tool_use", id: `t-${uuid}`, name: "Bash", input: { command: "ls" } }],
    },
  })}\n`;
}

export function expectClean(result: { code: number; stdout: string }) {
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("");
}
