import { join } from "node:path";
import { HOOK_TIMEOUTS } from "./activate.ts";
import { commandLine } from "./launcher.ts";
import type { FileChange } from "./tracked.ts";

/** Cursor's user-wide MCP servers: `~/.cursor/mcp.json`, `mcpServers.<name>` = {command, args}. */
export function cursorConfigDir(home: string): string {
  return join(home, ".cursor");
}

/**
 * Memory capture for Cursor: `~/.cursor/hooks.json` runs the capture when the agent loop ends (`stop`)
 * and once more when the conversation ends (`sessionEnd`: a catch-up for a transcript written after
 * `stop`). Cursor passes `conversation_id`, `workspace_roots` and `transcript_path` on stdin.
 */
export function cursorHookChange(home: string, launcher: string[]): FileChange {
  const hook = {
    command: commandLine([...launcher, "capture-agent", "--agent=cursor"]),
    timeout: HOOK_TIMEOUTS.Stop,
  };
  return {
    path: join(cursorConfigDir(home), "hooks.json"),
    edits: [
      { kind: "json", path: ["version"], value: 1, keepExisting: true },
      { kind: "json-append", path: ["hooks", "stop"], value: hook },
      { kind: "json-append", path: ["hooks", "sessionEnd"], value: hook },
    ],
    purpose: "memory capture: Cursor's stop and sessionEnd hooks, Cursor 1.7 or later",
  };
}

export function cursorChanges(home: string, launcher: string[]): FileChange[] {
  const server = { command: launcher[0], args: [...launcher.slice(1), "serve"] };
  return [
    {
      path: join(cursorConfigDir(home), "mcp.json"),
      edits: [{ kind: "json", path: ["mcpServers", "triforge"], value: server }],
      purpose: "the triforge MCP server",
    },
    cursorHookChange(home, launcher),
  ];
}
