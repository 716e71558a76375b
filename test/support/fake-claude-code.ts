/**
 * A fake Claude Code that writes its transcript late: it runs the project's hooks as the CLI does
 * (each command of `.claude/settings.local.json` through the shell, the hook JSON on stdin), and
 * writes each turn to the transcript only after the Stop hook for it has returned, in pieces. As
 * Claude Code 2.1.197 does, the transcript does not exist yet when the first Stop hook runs.
 *
 *   bun test/support/fake-claude-code.ts <project> <session id> <turns JSON> [--no-session-end]
 *
 * `turns`: `[{"prompt": "...", "reply": ["record text", ...]}]` (a reply of several records, as the
 * CLI writes one content block a record). HOME is the user's home, as for the real CLI. With
 * --no-session-end the process exits as after a `kill -9`: no SessionEnd hook, and the last turn
 * written to the transcript after its Stop hook.
 */
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [project, sessionId, turnsJson, ...flags] = process.argv.slice(2);
const turns = JSON.parse(turnsJson) as { prompt: string; reply: string[] }[];
const home = process.env.HOME ?? "";
const transcriptDir = join(home, ".claude", "projects", project.replace(/[^A-Za-z0-9]/g, "-"));
const transcript = join(transcriptDir, `${sessionId}.jsonl`);

type HookEntry = { hooks: { type: string; command: string; timeout?: number }[] };
const settings = JSON.parse(readFileSync(join(project, ".claude", "settings.local.json"), "utf8")) as {
  hooks: Record<string, HookEntry[]>;
};

async function runHooks(event: string, input: Record<string, unknown>): Promise<void> {
  const payload = JSON.stringify({
    session_id: sessionId,
    transcript_path: transcript,
    cwd: project,
    ...input,
    hook_event_name: event,
  });
  for (const entry of settings.hooks[event] ?? [])
    for (const hook of entry.hooks) {
      const child = Bun.spawn(["sh", "-c", hook.command], {
        cwd: project,
        stdin: new TextEncoder().encode(payload),
        stdout: "pipe",
        stderr: "pipe",
        env: process.env,
      });
      const timer = setTimeout(() => child.kill(9), (hook.timeout ?? 60) * 1000);
      const [stdout] = await Promise.all([new Response(child.stdout).text(), child.exited]);
      clearTimeout(timer);
      if (event === "Stop" && stdout.trim()) throw new Error(`the Stop hook printed ${stdout}`);
      if (child.exitCode !== 0) throw new Error(`the ${event} hook exited ${child.exitCode}`);
    }
}

let clock = Date.parse("2026-03-01T09:00:00.000Z");
const ts = () => new Date((clock += 1000)).toISOString();
let parent: string | null = null;
function record(fields: Record<string, unknown>): string {
  const uuid = crypto.randomUUID();
  const line = JSON.stringify({
    parentUuid: parent,
    isSidechain: false,
    sessionId,
    version: "2.1.197",
    cwd: project,
    uuid,
    timestamp: ts(),
    ...fields,
  });
  parent = uuid;
  return `${line}\n`;
}

/** Appends a text in pieces, pausing between them, as a process flushing a stream would. */
async function writeInPieces(text: string, pieces = 3): Promise<void> {
  const size = Math.ceil(text.length / pieces);
  for (let i = 0; i < text.length; i += size) {
    appendFileSync(transcript, text.slice(i, i + size));
    await Bun.sleep(5);
  }
}

mkdirSync(transcriptDir, { recursive: true });
await runHooks("SessionStart", { source: "startup" });
for (const [index, turn] of turns.entries()) {
  const promptId = crypto.randomUUID();
  const prompt = record({ type: "user", promptId, message: { role: "user", content: turn.prompt } });
  const messageId = `msg_${index}`;
  const reply = turn.reply
    .map((text) =>
      record({
        type: "assistant",
        message: {
          id: messageId,
          role: "assistant",
          model: "claude-opus-4-8",
          content: [{ type: "text", text }],
        },
      }),
    )
    .join("");
  // From the second turn on, the prompt and the start of the reply's first line are on disk when
  // Stop runs; the rest follows after it returned.
  const early = index > 0 ? prompt + reply.slice(0, 40) : "";
  appendFileSync(transcript, early);
  await runHooks("Stop", {
    prompt_id: promptId,
    stop_hook_active: false,
    last_assistant_message: turn.reply.at(-1),
  });
  await writeInPieces((prompt + reply).slice(early.length));
}
if (!flags.includes("--no-session-end")) await runHooks("SessionEnd", { reason: "other" });
