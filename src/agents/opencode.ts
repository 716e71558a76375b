import { existsSync } from "node:fs";
import { join } from "node:path";
import { getJsonValue } from "./json-edit.ts";
import { type FileChange, readText } from "./tracked.ts";

/** OpenCode's global config folder: `$XDG_CONFIG_HOME/opencode` (default `~/.config/opencode`) on every OS. */
export function opencodeConfigDir(
  home: string,
  env: Record<string, string | undefined> = process.env,
): string {
  return join(env.XDG_CONFIG_HOME || join(home, ".config"), "opencode");
}

/** The config file in use: an existing `opencode.jsonc` or `opencode.json`, else a new `opencode.json`. */
export function opencodeConfigFile(dir: string): string {
  for (const name of ["opencode.jsonc", "opencode.json"])
    if (existsSync(join(dir, name))) return join(dir, name);
  return join(dir, "opencode.json");
}

/**
 * Where our server goes: OpenCode's config lists local servers as `mcp.<name>` =
 * `{type: "local", command: [argv...], enabled}`; its newer layout nests them under `mcp.servers`
 * (and drops `enabled`), which we follow when the file already uses it.
 */
export function opencodeEntry(text: string, launcher: string[], file = "opencode.json") {
  const servers = text.trim() === "" ? undefined : getJsonValue(text, ["mcp", "servers"], file);
  const nested = typeof servers === "object" && servers !== null && !("type" in servers);
  const command = [...launcher, "serve"];
  return nested
    ? { path: ["mcp", "servers", "triforge"], value: { type: "local", command } }
    : { path: ["mcp", "triforge"], value: { type: "local", command, enabled: true } };
}

/**
 * The plugin that captures OpenCode sessions. OpenCode loads every file in its `plugins/` folder at
 * start-up; when a session goes idle (after each reply) this one starts the capture with the session's
 * id and the folder OpenCode runs in, and waits for nothing, so OpenCode never waits for triforge.
 */
export function opencodePlugin(command: string[]): string {
  return `// Written by \`triforge install\` (\`triforge uninstall\` removes it): after each reply, hands the
// session to triforge's memory, which reads it from OpenCode's own storage. Nothing happens in
// projects where triforge memory is not active.
import { spawn } from "node:child_process";

const command = ${JSON.stringify(command)};

// A reply has ended: 1.x's session.idle (or session.status idle); 2.x's execution events.
const ENDED = ["session.idle", "session.execution.succeeded", "session.execution.interrupted"];

function ended(event) {
  const status = (event.properties ?? event.data)?.status?.type;
  return ENDED.includes(event.type) || (event.type === "session.status" && status === "idle");
}

export const TriforgeMemory = async ({ directory }) => ({
  event: async ({ event }) => {
    const sessionID = (event.properties ?? event.data)?.sessionID;
    if (!ended(event) || typeof sessionID !== "string") return;
    const child = spawn(command[0], [...command.slice(1), \`--project=\${directory}\`], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify({ session_id: sessionID }));
    child.unref();
  },
});
`;
}

export function opencodePluginChange(home: string, launcher: string[], env = process.env): FileChange {
  return {
    path: join(opencodeConfigDir(home, env), "plugins", "triforge-memory.js"),
    edits: [{ kind: "file", content: opencodePlugin([...launcher, "capture-agent", "--agent=opencode"]) }],
    purpose: "memory capture: an OpenCode plugin that runs after each reply",
  };
}

export function opencodeChanges(home: string, launcher: string[], env = process.env): FileChange[] {
  const file = opencodeConfigFile(opencodeConfigDir(home, env));
  const text = readText(file) ?? "";
  const entry = opencodeEntry(text, launcher, file);
  // A new file gets the schema line OpenCode's docs start every config with; an existing one keeps its own.
  const schema = {
    kind: "json" as const,
    path: ["$schema"],
    value: "https://opencode.ai/config.json",
    keepExisting: true,
  };
  return [
    {
      path: file,
      edits: [schema, { kind: "json", path: entry.path, value: entry.value }],
      purpose: "the triforge MCP server",
    },
    opencodePluginChange(home, launcher, env),
  ];
}
