import { join } from "node:path";
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

/** A capture hook's time budget in seconds: the first capture of a long session reads it whole. */
export const CAPTURE_TIMEOUT_S = 30;

/**
 * Memory capture for Codex: a `Stop` hook in `$CODEX_HOME/hooks.json` (Codex 0.114 and later; the file
 * has Claude Code's shape). After every turn Codex passes `session_id`, `cwd` and `transcript_path` (the
 * session's rollout file) on stdin; the capture does nothing outside projects where memory is active.
 */
export function codexHookChange(home: string, launcher: string[], env = process.env): FileChange {
  const command = commandLine([...launcher, "capture-agent", "--agent=codex"]);
  return {
    path: join(codexConfigDir(home, env), "hooks.json"),
    edits: [
      {
        kind: "json-append",
        path: ["hooks", "Stop"],
        value: { hooks: [{ type: "command", command, timeout: CAPTURE_TIMEOUT_S }] },
      },
    ],
    purpose: "memory capture: Codex's Stop hook (Codex 0.114 or later)",
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
