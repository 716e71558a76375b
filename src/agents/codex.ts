import { join } from "node:path";
import { HOOK_TIMEOUTS } from "./activate.ts";
import { commandLine } from "./launcher.ts";
import { tomlString } from "./text-edit.ts";
import type { FileChange } from "./tracked.ts";

/** Codex keeps its config in `$CODEX_HOME/config.toml` (default `~/.codex`). */
export function codexConfigDir(home: string, env: Record<string, string | undefined> = process.env): string {
  return env.CODEX_HOME || join(home, ".codex");
}

/** `[mcp_servers.triforge]` as Codex documents MCP servers: `command` and `args`. */
export function codexTable(launcher: string[]): string {
  const args = [...launcher.slice(1), "serve"].map(tomlString).join(", ");
  return `[mcp_servers.triforge]\ncommand = ${tomlString(launcher[0])}\nargs = [${args}]\n`;
}

/** Our edit is textual; Bun's TOML parser checks the file before (clear error, nothing lost) and after. */
function checkToml(text: string, file: string): void {
  try {
    Bun.TOML.parse(text);
  } catch (error) {
    throw new Error(`${file}: invalid TOML (${(error as Error).message}); fix the file, then run again`);
  }
}

/**
 * Memory for Codex, in `$CODEX_HOME/hooks.json` (Codex 0.114 and later; the file has Claude Code's
 * shape): a `Stop` hook that captures, after every turn (Codex passes `session_id`, `cwd`,
 * `transcript_path` — the session's rollout — `turn_id` and `last_assistant_message` on stdin), and a
 * `SessionStart` hook that injects the project's prelude (its output, `hookSpecificOutput` with
 * `hookEventName` and `additionalContext`, is the shape Codex reads), and one that indexes what the
 * previous session left unindexed. All do nothing outside projects where memory is active.
 */
export function codexHookChange(home: string, launcher: string[], env = process.env): FileChange {
  const hook = (args: string[], timeout: number) => ({
    hooks: [{ type: "command", command: commandLine([...launcher, ...args]), timeout }],
  });
  return {
    path: join(codexConfigDir(home, env), "hooks.json"),
    edits: [
      {
        kind: "json-append",
        path: ["hooks", "SessionStart"],
        value: hook(["prelude"], HOOK_TIMEOUTS.SessionStart),
      },
      {
        kind: "json-append",
        path: ["hooks", "SessionStart"],
        value: hook(["capture-agent", "--agent=codex"], HOOK_TIMEOUTS.SessionStart),
      },
      {
        kind: "json-append",
        path: ["hooks", "Stop"],
        value: hook(["capture-agent", "--agent=codex"], HOOK_TIMEOUTS.Stop),
      },
    ],
    purpose:
      "memory for Codex: its SessionStart (prelude, catch-up index) and Stop (capture) hooks, Codex 0.114 or later",
  };
}

export function codexChanges(home: string, launcher: string[], env = process.env): FileChange[] {
  const path = join(codexConfigDir(home, env), "config.toml");
  return [
    {
      path,
      edits: [{ kind: "toml-table", name: "mcp_servers.triforge", table: codexTable(launcher) }],
      validate: (text) => checkToml(text, path),
      purpose: "the triforge MCP server",
    },
    codexHookChange(home, launcher, env),
  ];
}
