import { join } from "node:path";
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

export function codexChanges(home: string, launcher: string[], env = process.env): FileChange[] {
  const path = join(codexConfigDir(home, env), "config.toml");
  return [
    {
      path,
      edits: [{ kind: "toml-table", name: "mcp_servers.triforge", table: codexTable(launcher) }],
      validate: (text) => checkToml(text, path),
      purpose: "the triforge MCP server",
    },
  ];
}
