import { join } from "node:path";
import type { FileChange } from "./tracked.ts";

/** Cursor's user-wide MCP servers: `~/.cursor/mcp.json`, `mcpServers.<name>` = {command, args}. */
export function cursorConfigDir(home: string): string {
  return join(home, ".cursor");
}

export function cursorChanges(home: string, launcher: string[]): FileChange[] {
  const server = { command: launcher[0], args: [...launcher.slice(1), "serve"] };
  return [
    {
      path: join(cursorConfigDir(home), "mcp.json"),
      edits: [{ kind: "json", path: ["mcpServers", "triforge"], value: server }],
      purpose: "the triforge MCP server",
    },
  ];
}
